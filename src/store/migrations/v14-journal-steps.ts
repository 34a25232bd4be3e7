import type { Migration } from './index.js';

/**
 * Migration 14: an operation's journal moves from one JSON array in
 * lcm_op_occ_details (rewritten whole at every step: an instantiate of 500
 * objects spent a third of its CPU there) to a row a step, appended in
 * constant time. The steps keep their order (seq); the journal is read back
 * as the same JSON array (lcm-op-occ-repository.ts: journalText).
 */
export const journalSteps: Migration = {
  version: 14,
  name: 'journal-steps',
  sql: `
    CREATE TABLE lcm_op_occ_journal_steps (
      op_id TEXT NOT NULL REFERENCES lcm_op_occs (id) ON DELETE CASCADE,
      seq   INTEGER NOT NULL,
      step  TEXT NOT NULL,
      PRIMARY KEY (op_id, seq)
    );
    -- vnfm only ever wrote valid JSON here (json_insert and JSON.stringify); a journal edited into anything else has no steps to carry
    INSERT INTO lcm_op_occ_journal_steps (op_id, seq, step)
      SELECT d.id, j.key, j.value FROM lcm_op_occ_details d, json_each(d.journal) j
      WHERE json_valid(d.journal) AND json_type(d.journal) = 'array' ORDER BY d.rowid, j.key;
    ALTER TABLE lcm_op_occ_details DROP COLUMN journal;
  `,
  postgres: `
    CREATE TABLE lcm_op_occ_journal_steps (
      rowid BIGINT GENERATED ALWAYS AS IDENTITY,
      op_id TEXT NOT NULL REFERENCES lcm_op_occs (id) ON DELETE CASCADE,
      seq   INTEGER NOT NULL,
      step  TEXT NOT NULL,
      PRIMARY KEY (op_id, seq)
    );
    INSERT INTO lcm_op_occ_journal_steps (op_id, seq, step)
      SELECT d.id, j.n - 1, j.step::text FROM lcm_op_occ_details d, json_array_elements(d.journal::json) WITH ORDINALITY AS j (step, n)
      ORDER BY d.rowid, j.n;
    ALTER TABLE lcm_op_occ_details DROP COLUMN journal;
  `,
};
