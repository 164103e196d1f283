-- Retried creates (docs/idempotency.md; src/idempotency/): the answer of each
-- create sent with an `Idempotency-Key`, kept 24 hours so a retry answers it instead of creating again.
--
-- A row is written in the create's own transaction: claimed (answer columns NULL) before the handler
-- runs, completed with the answer, and committed together with what the create wrote. So a committed
-- row always has its answer, and a crash before the commit leaves neither the row nor the create.
-- The claim's primary key is what makes a concurrent duplicate wait for the first to finish.
CREATE TABLE IF NOT EXISTS idempotency_keys (
  -- Whose key: 'api_key:<key id>' or 'user:<user id>' (the same credential, whichever token of it).
  credential   text NOT NULL,
  -- SHA-256 of the Idempotency-Key: the key itself is never stored (it also seals `answer`).
  key_hash     bytea NOT NULL,
  -- SHA-256 over the method, path with query string, and body bytes of the first request.
  request_hash bytea NOT NULL,
  status       smallint,
  content_type text,
  -- The answer's body, sealed (AES-256-GCM) with a key derived from the Idempotency-Key: answers
  -- such as a new API key or an alert's webhook secret are not readable from the table alone.
  answer       bytea,
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (credential, key_hash)
);
-- The purge of expired rows (src/idempotency/store.ts) walks this.
CREATE INDEX IF NOT EXISTS idempotency_keys_created_idx ON idempotency_keys (created_at);
