// What every deploy test script prints: one "ok - NAME" or "not ok - NAME" line per check, with the
// problems indented below it, then a summary; the process exits 1 when any check failed.
let passed = 0;
let failed = 0;

export function check(name, problems) {
  if (problems.length === 0) {
    passed++;
    console.log(`ok - ${name}`);
  } else {
    failed++;
    console.log(`not ok - ${name}`);
    for (const p of problems) console.log(`    ${p}`);
  }
}

export function finish() {
  console.log(`\n${passed} passed, ${failed} failed`);
  process.exit(failed === 0 ? 0 : 1);
}
