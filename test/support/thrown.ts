/** The error `action` throws; fails the test when it throws nothing. */
export function thrown(action: () => unknown): Error {
  try {
    action();
  } catch (error) {
    return error as Error;
  }
  throw new Error("nothing was thrown");
}
