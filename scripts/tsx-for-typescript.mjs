// tap's node argument (package.json): a test file written in TypeScript runs through tsx; a compiled
// one (npm test runs test-build/, see scripts/test.mjs) starts without a loader, since tsx's module
// hooks answer every import of the process from another thread (1-2.5 s of CPU per test file).
if (/\.[cm]?tsx?$/.test(process.argv[1] ?? '')) await import('tsx');
