-- OpenID Connect sign-in for the console (issue 37 item 1; docs/console.md
-- "Single sign-on (OIDC)").
--
-- * console_session.auth_method: `password` (the users file) or `oidc`. A
--   password session stays bound to the users file entry (credential_sha256);
--   an OIDC session carries the role its ID token mapped to (`role`) and the
--   ID token itself as the `id_token_hint` of the provider's logout.
-- * console_oidc_login: one row per sign-in under way, keyed by the SHA-256 of
--   its `state`, bound to the browser by the SHA-256 of a random cookie, with
--   the nonce and the PKCE verifier. The callback deletes it (single use: a
--   replayed `state` finds nothing); rows expire after 10 minutes.
ALTER TABLE console_session
    ADD COLUMN auth_method TEXT NOT NULL DEFAULT 'password'
        CHECK (auth_method IN ('password', 'oidc')),
    ADD COLUMN role TEXT CHECK (role IN ('viewer', 'operator', 'admin')),
    ADD COLUMN id_token TEXT;

CREATE TABLE console_oidc_login (
    state_sha256   TEXT PRIMARY KEY,
    browser_sha256 TEXT NOT NULL,
    nonce          TEXT NOT NULL,
    pkce_verifier  TEXT NOT NULL,
    created_at     TIMESTAMPTZ NOT NULL,
    expires_at     TIMESTAMPTZ NOT NULL
);
CREATE INDEX console_oidc_login_expires_idx ON console_oidc_login (expires_at);
