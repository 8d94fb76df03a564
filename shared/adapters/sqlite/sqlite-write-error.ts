import { AgentqError } from '../../contracts/errors.js';

/**
 * A failed write of the embedded store as the error its caller can act on: another process holding the
 * write lock past the busy timeout is UNAVAILABLE (retried), a full disk is STORAGE_FULL naming the file
 * (ingest parks and waits for space rather than spending attempts); anything else as it was.
 */
export function sqliteWriteError(error: unknown, path: string): unknown {
  if (!(error instanceof Error)) return error;
  const code = 'code' in error ? String(error.code) : '';
  if (code.startsWith('SQLITE_BUSY'))
    return new AgentqError(
      'UNAVAILABLE',
      `vector store ${path} stayed locked by another process longer than its busy timeout; the write will be retried`,
      { retryable: true, cause: error },
    );
  // SQLite says "database or disk is full" (SQLITE_FULL); a refused write of the WAL may come as an I/O error.
  if (
    code === 'SQLITE_FULL' ||
    code === 'ENOSPC' ||
    (code.startsWith('SQLITE_IOERR') && /full|space/i.test(error.message))
  )
    return new AgentqError(
      'STORAGE_FULL',
      `the disk holding vector store ${path} is full: nothing was written; free space on it or move AGENTQ_DATA_DIR to a larger disk (ingest resumes by itself once there is room)`,
      { retryable: true, cause: error, details: { path } },
    );
  return error;
}
