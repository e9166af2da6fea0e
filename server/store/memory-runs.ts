/** Pipeline records in memory: the MemoryStore's, and the fake cluster's of the unit tests. */
import { RecordConflict, type RunRecord, type RunRecords } from './store.ts';

export function memoryRunRecords() {
  const records = new Map<string, { record: RunRecord; version: number }>();
  const variables = new Map<string, string[]>();
  let version = 0;
  const key = (ns: string, name: string) => `${ns}/${name}`;
  const runs: RunRecords = {
    async getRecord(ns, name) {
      const r = records.get(key(ns, name));
      return r && { record: structuredClone(r.record), version: String(r.version) };
    },
    async putRecord(record, v) {
      const k = key(record.namespace, record.name);
      const have = records.get(k);
      if ((v === undefined && have) || (v !== undefined && String(have?.version) !== v)) throw new RecordConflict('conflict');
      records.set(k, { record: structuredClone(record), version: ++version });
      return String(version);
    },
    async deleteRecord(ns, name) {
      records.delete(key(ns, name));
    },
    async putVariables(ns, name, values) {
      if (values.length === 0) variables.delete(key(ns, name));
      else variables.set(key(ns, name), [...values]);
    },
    async getVariables(ns, name) {
      return [...(variables.get(key(ns, name)) ?? [])];
    },
    async deleteVariables(ns, name) {
      variables.delete(key(ns, name));
    },
    async listRecords(ns) {
      return [...records.values()].filter((r) => r.record.namespace === ns).map((r) => structuredClone(r.record));
    },
  };
  return { runs, records, variables };
}
