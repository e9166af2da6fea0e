// Sets values in a chart's values.yaml, keeping its comments and layout:
//   node scripts/release/chart-values.mjs VALUES_FILE path.to.key=value ...
// The release's chart.sh names its images this way in the copy of chart/ it packages.
import { readFileSync, writeFileSync } from 'node:fs';
import { parseDocument } from 'yaml';

const [file, ...settings] = process.argv.slice(2);
if (!file || settings.length === 0) {
  console.error('usage: chart-values.mjs VALUES_FILE key.path=value ...');
  process.exit(2);
}
const doc = parseDocument(readFileSync(file, 'utf8'));
for (const setting of settings) {
  const eq = setting.indexOf('=');
  const path = setting.slice(0, eq).split('.');
  // Only keys the chart already has: a misspelt one must fail, not add a value no template reads.
  if (eq < 1 || !doc.hasIn(path)) {
    console.error(`chart-values: ${file} has no value ${setting.slice(0, Math.max(eq, 0)) || setting}`);
    process.exit(1);
  }
  doc.setIn(path, setting.slice(eq + 1));
}
writeFileSync(file, doc.toString({ lineWidth: 0, flowCollectionPadding: false }));
