-- Three more inbox kinds for people (issue 40 §2, spec/asks.md "The inbox"). Expand only: a wider CHECK.
-- A release before this one lists such an item as any other (it maps rows without checking their
-- kind) and never writes one.
-- reply: a comment on a task whose thread the human wrote in before, by someone else.
-- changed: someone else changed a task assigned to the human (tasks_update).
-- to_review: work handed in, for each human who may review it; done once it leaves review.
ALTER TABLE inbox_items DROP CONSTRAINT inbox_items_kind_check;
ALTER TABLE inbox_items ADD CONSTRAINT inbox_items_kind_check CHECK (kind IN ('ask', 'answer', 'mention', 'review', 'assigned', 'approval', 'overdue', 'budget', 'reply', 'changed', 'to_review'));
