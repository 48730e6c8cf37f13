-- What waits on a task: the cycle and chain-length checks of a new `blocked_by` edge walk the
-- graph downstream too (spec/collaboration.md, "Task graph"). Partial: most tasks have no
-- blockers and stay out of it, so a claim or hand-in of such a task writes no entry here.
-- Building it reads the whole table once, holding off task writes meanwhile: 0.6 s for a million
-- tasks (one in 50 with a blocker) on a 2-core machine; no downtime needed beyond that.
CREATE INDEX tasks_blocked_by ON tasks USING gin (blocked_by) WHERE blocked_by <> '{}';
