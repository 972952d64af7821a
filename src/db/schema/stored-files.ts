import type { ColumnType } from 'kysely';

/** Tables of migration 0200: file bytes kept in PostgreSQL (storage/postgres-storage.ts). */
export interface StoredFilesTable {
  path_id: string;
  size: number;
  content_type: string;
  chunk_size: number;
  stored_at: ColumnType<Date, string | undefined, never>;
}

export interface StoredFileChunksTable {
  path_id: string;
  chunk_index: number;
  data: Buffer;
}

export interface StoredFilesTables {
  stored_files: StoredFilesTable;
  stored_file_chunks: StoredFileChunksTable;
}
