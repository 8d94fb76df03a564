import type { Database } from 'better-sqlite3';

/**
 * Tables of the embedded store. `chunks` holds the records; `chunks_fts` is an external-content FTS5
 * index over it kept in step by triggers (so a record and its index entry change in one transaction);
 * vectors live in one sqlite-vec `vec0` table per vector length (`vec_d<n>`), partitioned by tenant,
 * with the record's rowid, and a trigger per table removes a record's vector with the record.
 */
export const SCHEMA = `
create table if not exists collections (
  tenant text not null,
  name text not null,
  dimensions integer,
  created_at integer not null,
  primary key (tenant, name)
) without rowid;

create table if not exists chunks (
  rowid integer primary key,
  tenant text not null,
  collection text not null,
  id text not null,
  text text not null,
  context text not null default '',
  payload text not null default '{}',
  dimensions integer,
  unique (tenant, collection, id)
);

-- Replacing a document's chunks deletes by docId: keep that a lookup, not a scan.
create index if not exists chunks_doc on chunks (tenant, collection, json_extract(payload, '$.docId'));

-- Records still waiting for their vector (added in the background after ingest): a lookup, not a scan.
create index if not exists chunks_pending on chunks (tenant, collection, rowid) where dimensions is null;

-- Bumped by every change to a collection's chunks, by whichever process writes: an in-memory copy of
-- the collection's vectors (DenseVectorCache) is reloaded when its version moved.
create table if not exists chunk_versions (
  tenant text not null,
  collection text not null,
  version integer not null,
  primary key (tenant, collection)
) without rowid;
create trigger if not exists chunks_version_insert after insert on chunks begin
  insert into chunk_versions (tenant, collection, version) values (new.tenant, new.collection, 1)
    on conflict (tenant, collection) do update set version = version + 1;
end;
create trigger if not exists chunks_version_delete after delete on chunks begin
  insert into chunk_versions (tenant, collection, version) values (old.tenant, old.collection, 1)
    on conflict (tenant, collection) do update set version = version + 1;
end;
create trigger if not exists chunks_version_update after update on chunks begin
  insert into chunk_versions (tenant, collection, version) values (new.tenant, new.collection, 1)
    on conflict (tenant, collection) do update set version = version + 1;
end;

create virtual table if not exists chunks_fts using fts5(
  context, text,
  content = 'chunks', content_rowid = 'rowid',
  tokenize = 'unicode61 remove_diacritics 2'
);

create trigger if not exists chunks_fts_insert after insert on chunks begin
  insert into chunks_fts (rowid, context, text) values (new.rowid, new.context, new.text);
end;
create trigger if not exists chunks_fts_delete after delete on chunks begin
  insert into chunks_fts (chunks_fts, rowid, context, text) values ('delete', old.rowid, old.context, old.text);
end;
create trigger if not exists chunks_fts_update after update of text, context on chunks begin
  insert into chunks_fts (chunks_fts, rowid, context, text) values ('delete', old.rowid, old.context, old.text);
  insert into chunks_fts (rowid, context, text) values (new.rowid, new.context, new.text);
end;
`;

export function vectorTable(dimensions: number): string {
  return `vec_d${dimensions}`;
}

/** Creates the vec0 table for vectors of this length (and its clean-up trigger) if missing. */
export function createVectorTable(db: Database, dimensions: number): void {
  if (!Number.isInteger(dimensions) || dimensions < 1)
    throw new Error(`vector length ${dimensions} is not a positive integer`);
  const table = vectorTable(dimensions);
  db.exec(`
    create virtual table if not exists ${table} using vec0(
      tenant text partition key,
      collection text,
      embedding float[${dimensions}] distance_metric=cosine
    );
    create trigger if not exists ${table}_delete after delete on chunks when old.dimensions = ${dimensions} begin
      delete from ${table} where rowid = old.rowid;
    end;
  `);
}
