/** The dashboard's times: "2026-12-02 13:21 UTC" from an ISO time; empty stays empty. */
export function when(iso: string): string {
  const t = Date.parse(iso);
  return Number.isNaN(t) ? iso : `${new Date(t).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}
