#include "traces/internal/profile_schema.hpp"

namespace ipusim::traces::internal {

// Foreign keys are declared for documentation and tools (DB browsers draw the
// relations); SQLite does not enforce them unless a connection asks it to.
const char* const kCreateSchemaSql = R"SQL(
CREATE TABLE meta(
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
CREATE TABLE runs(
  id          INTEGER PRIMARY KEY,
  entry_point INTEGER NOT NULL,
  name        TEXT    NOT NULL,
  start_cycle INTEGER NOT NULL,
  end_cycle   INTEGER NOT NULL,
  steps       INTEGER NOT NULL,
  captured    INTEGER NOT NULL
);
CREATE TABLE tracks(
  id         INTEGER PRIMARY KEY,
  parent_id  INTEGER REFERENCES tracks(id),
  kind       TEXT    NOT NULL,
  name       TEXT    NOT NULL,
  ipu        INTEGER,
  tile       INTEGER,
  sort_order INTEGER NOT NULL
);
CREATE TABLE slices(
  id         INTEGER PRIMARY KEY,
  track_id   INTEGER NOT NULL REFERENCES tracks(id),
  run_id     INTEGER REFERENCES runs(id),
  ts         INTEGER NOT NULL,
  dur        INTEGER NOT NULL,
  name       TEXT    NOT NULL,
  category   TEXT    NOT NULL,
  depth      INTEGER NOT NULL,
  parent_id  INTEGER REFERENCES slices(id),
  program_id INTEGER REFERENCES programs(id),
  phase_id   INTEGER REFERENCES phases(id),
  bytes      INTEGER
);
CREATE TABLE programs(
  id        INTEGER PRIMARY KEY,
  parent_id INTEGER REFERENCES programs(id),
  kind      TEXT    NOT NULL,
  name      TEXT    NOT NULL,
  layer     TEXT    NOT NULL,
  op        TEXT    NOT NULL,
  ordinal   INTEGER NOT NULL
);
CREATE TABLE phases(
  id         INTEGER PRIMARY KEY,
  kind       TEXT    NOT NULL,
  name       TEXT    NOT NULL,
  program_id INTEGER REFERENCES programs(id),
  bytes      INTEGER
);
CREATE TABLE tile_phase_cycles(
  phase_id INTEGER NOT NULL REFERENCES phases(id),
  ipu      INTEGER NOT NULL,
  tile     INTEGER NOT NULL,
  cycles   INTEGER NOT NULL,
  vertices INTEGER NOT NULL,
  PRIMARY KEY(phase_id, ipu, tile)
) WITHOUT ROWID;
CREATE TABLE tile_memory(
  ipu         INTEGER NOT NULL,
  tile        INTEGER NOT NULL,
  category    TEXT    NOT NULL,
  always_live INTEGER NOT NULL,
  bytes       INTEGER NOT NULL
);
CREATE TABLE tile_memory_peak(
  ipu                        INTEGER NOT NULL,
  tile                       INTEGER NOT NULL,
  peak_bytes                 INTEGER NOT NULL,
  always_live_bytes          INTEGER NOT NULL,
  not_always_live_peak_bytes INTEGER NOT NULL,
  PRIMARY KEY(ipu, tile)
) WITHOUT ROWID;
CREATE TABLE counters(
  track_id INTEGER NOT NULL REFERENCES tracks(id),
  ts       INTEGER NOT NULL,
  value    REAL    NOT NULL,
  run_id   INTEGER,
  step     INTEGER
);
CREATE TABLE program_work(
  program_id INTEGER PRIMARY KEY REFERENCES programs(id),
  flops      INTEGER NOT NULL,
  vertices   INTEGER NOT NULL,
  tiles      INTEGER NOT NULL
);
CREATE TABLE tensors(
  id          INTEGER PRIMARY KEY,
  name        TEXT    NOT NULL,
  category    TEXT    NOT NULL,
  always_live INTEGER NOT NULL,
  bytes       INTEGER NOT NULL,
  tiles       INTEGER NOT NULL,
  layer       TEXT    NOT NULL,
  op          TEXT    NOT NULL
);
CREATE TABLE program_order(
  entry_point INTEGER NOT NULL,
  position    INTEGER NOT NULL,
  program_id  INTEGER NOT NULL REFERENCES programs(id),
  PRIMARY KEY(entry_point, position)
) WITHOUT ROWID;
CREATE TABLE tensor_lifetimes(
  entry_point    INTEGER NOT NULL,
  tensor_id      INTEGER NOT NULL REFERENCES tensors(id),
  first_position INTEGER NOT NULL,
  last_position  INTEGER NOT NULL,
  PRIMARY KEY(entry_point, tensor_id)
) WITHOUT ROWID;
CREATE TABLE slice_track_stats(
  track_id    INTEGER PRIMARY KEY REFERENCES tracks(id),
  slice_count INTEGER NOT NULL,
  min_ts      INTEGER NOT NULL,
  max_end     INTEGER NOT NULL,
  max_dur     INTEGER NOT NULL,
  look_back   INTEGER NOT NULL
);
CREATE TABLE long_slices(
  track_id INTEGER NOT NULL REFERENCES tracks(id),
  slice_id INTEGER NOT NULL REFERENCES slices(id),
  PRIMARY KEY(track_id, slice_id)
) WITHOUT ROWID;
CREATE TABLE slice_strings(
  id   INTEGER PRIMARY KEY,
  text TEXT NOT NULL
);
CREATE TABLE slice_chunks(
  track_id    INTEGER NOT NULL REFERENCES tracks(id),
  chunk       INTEGER NOT NULL,
  slice_count INTEGER NOT NULL,
  min_ts      INTEGER NOT NULL,
  max_end     INTEGER NOT NULL,
  data        BLOB    NOT NULL,
  PRIMARY KEY(track_id, chunk)
) WITHOUT ROWID;
CREATE TABLE slice_summary(
  track_id      INTEGER NOT NULL REFERENCES tracks(id),
  depth         INTEGER NOT NULL,
  origin_ts     INTEGER NOT NULL,
  bucket_cycles INTEGER NOT NULL,
  bucket_count  INTEGER NOT NULL,
  busy          BLOB    NOT NULL,
  category      BLOB    NOT NULL,
  PRIMARY KEY(track_id, depth)
) WITHOUT ROWID;
CREATE TABLE counter_summary(
  track_id      INTEGER PRIMARY KEY REFERENCES tracks(id),
  value_count   INTEGER NOT NULL,
  origin_ts     INTEGER NOT NULL,
  bucket_cycles INTEGER NOT NULL,
  bucket_count  INTEGER NOT NULL,
  bucket_values BLOB    NOT NULL,
  first_ts      BLOB    NOT NULL,
  last_ts       BLOB    NOT NULL,
  value_min     BLOB    NOT NULL,
  value_max     BLOB    NOT NULL,
  value_first   BLOB    NOT NULL,
  value_last    BLOB    NOT NULL
);
)SQL";

const char* const kCreateIndexesSql = R"SQL(
CREATE INDEX slices_by_track_ts ON slices(track_id, ts);
CREATE INDEX slices_by_run ON slices(run_id);
CREATE INDEX counters_by_track_ts ON counters(track_id, ts);
)SQL";

}  // namespace ipusim::traces::internal
