// fs-native-extensions ships no types; this declares only the surface data-dir-lock.ts uses (its README, "API").
declare module 'fs-native-extensions' {
  /**
   * An exclusive lock on the whole open file `fd`, or false at once when another open file holds
   * one. Linux: an open file description lock (fcntl F_OFD_SETLK); macOS: flock; Windows:
   * LockFileEx. The kernel drops it when the file is closed, so when its process ends.
   */
  export function tryLock(fd: number): boolean;
}
