-- Schedules that make a template's whole graph at each occurrence (issue 42 §2, §3): `template`
-- holds `{id, params}` for templates_instantiate, and `task` is null for such a schedule (a schedule
-- makes one or the other). Expand-only: a new nullable column, and a NOT NULL relaxed. The release
-- before this one never makes a template schedule; an instance of it that runs one fails that
-- schedule's pass (it reads a null `task`), and an instance of this release makes the occurrence.
ALTER TABLE schedules ADD COLUMN template jsonb;
ALTER TABLE schedules ALTER COLUMN task DROP NOT NULL;
