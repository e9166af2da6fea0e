/**
 * What the front door and the service's waking page agree on (ingress/sleeping.ts sends, the
 * service's server/waking/route.ts answers): every request to a sleeping or waking namespace's
 * endpoint goes to WAKING_PATH with these headers, which Caddy sets, replacing what the client sent.
 */

/** The path of the service's waking page. */
export const WAKING_PATH = '/front-door/waking';
/** The front door's key (the chart's Secret): without it the service believes neither header below. */
export const FRONT_DOOR_KEY_HEADER = 'x-devtool-front-door-key';
/** The namespace whose endpoint was asked for. */
export const WAKE_NAMESPACE_HEADER = 'x-devtool-wake-namespace';
/** The host the client asked for (the endpoint), shown on the page. */
export const WAKE_HOST_HEADER = 'x-devtool-wake-host';
