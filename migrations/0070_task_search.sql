-- A task's search document moves out of the tasks table into a table of its own (issue 26).
--
-- As a stored generated column of `tasks` (0050), PostgreSQL recomputed `to_tsvector` of the title
-- and description on every UPDATE of a task, and since a status change always writes new index
-- entries, it also added every lexeme of the document to the GIN index again. Claims, hand-ins and
-- heartbeats all update the task: over tasks with 2 KB descriptions, the one-call work cycle ran at
-- 110 jobs/s, and at 272 with the document here (bench/README.md, "Search documents beside the
-- tasks"). Here the document is written only when the task is created or its title or description
-- changes, by the triggers below, whoever writes the row.
--
-- Stop every instance first: this drops `tasks.search_doc`, which the search of an older version
-- reads (docs/operations.md, "Upgrades and rolling deploys"). It copies every task's document, so
-- it takes time in proportion to the tasks: 29 s for a million tasks of about 30 words each, index
-- build included, on a 2-core benchmark machine.

CREATE TABLE task_search (
  task_id    text PRIMARY KEY REFERENCES tasks (id),
  -- Title (weight A) and description (weight B), for `q=`; comments keep their own document.
  search_doc tsvector NOT NULL
);
INSERT INTO task_search (task_id, search_doc) SELECT id, search_doc FROM tasks;
ALTER TABLE tasks DROP COLUMN search_doc;
CREATE INDEX task_search_doc ON task_search USING gin (search_doc);

CREATE FUNCTION baton_task_search() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO task_search (task_id, search_doc)
  VALUES (NEW.id, setweight(to_tsvector('english', NEW.title), 'A') || setweight(to_tsvector('english', NEW.description), 'B'))
  ON CONFLICT (task_id) DO UPDATE SET search_doc = EXCLUDED.search_doc;
  RETURN NULL;
END
$$;
CREATE TRIGGER tasks_search_insert AFTER INSERT ON tasks
  FOR EACH ROW EXECUTE FUNCTION baton_task_search();
CREATE TRIGGER tasks_search_update AFTER UPDATE OF title, description ON tasks
  FOR EACH ROW WHEN (OLD.title IS DISTINCT FROM NEW.title OR OLD.description IS DISTINCT FROM NEW.description)
  EXECUTE FUNCTION baton_task_search();
