/**
 * Runs an example's `main` when its file is the program (`npx tsx
 * examples/x.ts`), and not when a test imports the file to read what `main`
 * returns. A failure sets the exit code, as a program's should.
 */
export function runIfMain(example: NodeModule, main: () => Promise<unknown>): void {
  if (require.main !== example) return;
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
