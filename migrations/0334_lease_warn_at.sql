-- When a live lease passes 80 % of its term and its holder gets `lease.expiring` (warnExpiring in
-- src/store/lease-expiry.ts). The sweep, every second, found those leases by walking every live
-- lease by expiry and computing the point for each: 81 ms a sweep at 20,000 leases, nearly all of
-- them renewed and not yet due (issue 44 §1). The point is now a column with a partial index of the
-- leases not yet warned, so a sweep reads only the due ones.
--
-- A trigger keeps it, from `expires_at` and `ttl_s` (a generated column cannot: subtracting an
-- interval from a timestamptz is not immutable), so a release before this one, which does not know
-- the column, still grants and renews leases the sweep warns on time. Expand only.
ALTER TABLE leases ADD COLUMN warn_at timestamptz;

CREATE FUNCTION baton_lease_warn_at() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.warn_at := NEW.expires_at - make_interval(secs => NEW.ttl_s * 0.2);
  RETURN NEW;
END
$$;

CREATE TRIGGER leases_warn_at BEFORE INSERT OR UPDATE OF expires_at, ttl_s ON leases
  FOR EACH ROW EXECUTE FUNCTION baton_lease_warn_at();

UPDATE leases SET warn_at = expires_at - make_interval(secs => ttl_s * 0.2) WHERE state = 'active';

CREATE INDEX leases_warn_due ON leases (warn_at) WHERE state = 'active' AND warned_at IS NULL;
