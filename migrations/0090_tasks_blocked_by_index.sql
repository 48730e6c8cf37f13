-- What waits on a task: the cycle and chain-length checks of a new `blocked_by` edge walk the
-- graph downstream too (spec/collaboration.md, "Task graph"). Partial: most tasks have no
-- blockers and stay out of it, so a claim or hand-in of such a task writes no entry here.
CREATE INDEX tasks_blocked_by ON tasks USING gin (blocked_by) WHERE blocked_by <> '{}';
