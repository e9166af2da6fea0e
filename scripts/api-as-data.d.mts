import type { Plugin } from 'esbuild';

export const apiAsData: Plugin;
export function apiData(file: string): Promise<string>;
