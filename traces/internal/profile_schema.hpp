#pragma once
// Internal to traces/: the SQL of the schema (kSchemaVersion; traces/SCHEMA.md documents
// every table and column). Tables are created empty by the writer; indexes
// and the derived slice_track_stats rows are added at commit, when building
// them in one pass is much cheaper than maintaining them during inserts.
namespace ipusim::traces::internal {

// Tables (the tile_slices view's SQL is profile_rules.json's, tileSlicesViewSql()).
extern const char* const kCreateSchemaSql;
// Indexes the reader's queries rely on; run once at commit.
extern const char* const kCreateIndexesSql;

}  // namespace ipusim::traces::internal
