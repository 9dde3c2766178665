// A real OpenID Provider (panva/oidc-provider) for msgx's console tests
// (tests/it/oidc.rs). Started by the tests, one per test, on a free port of
// 127.0.0.1; prints `listening <port>` once it serves. Configured by
// environment variables:
//   OP_CLIENTS   JSON list of clients (client_id, client_secret, redirect_uris,
//                post_logout_redirect_uris)
//   OP_USERS     JSON object: login -> extra claims (e.g. {"alice": {"groups": ["msgx-admins"]}});
//                any other login signs in with no extra claim
//   OP_KEY_PEM   file of the RSA private key (PKCS#8 PEM) that signs ID tokens
//   OP_KID       its key id (default "k1")
//   OP_ID_TOKEN_TTL  ID token lifetime in seconds (default 3600)
//   OP_PORT      the port (default: a free one; a restart on the same port with
//                another key is a key rotation)
//   OP_ISSUER    the issuer URL, when clients reach the provider through a proxy
//                in front of it (default: http://127.0.0.1:<port>)
// The login page is oidc-provider's development interaction (any password);
// consent is granted without a page.
import http from 'node:http';
import crypto from 'node:crypto';
import fs from 'node:fs';
import Provider from 'oidc-provider';

const clients = JSON.parse(process.env.OP_CLIENTS ?? '[]');
const users = JSON.parse(process.env.OP_USERS ?? '{}');
const jwk = crypto.createPrivateKey(fs.readFileSync(process.env.OP_KEY_PEM)).export({ format: 'jwk' });
Object.assign(jwk, { kid: process.env.OP_KID ?? 'k1', use: 'sig', alg: 'RS256' });

const server = http.createServer();
server.listen(Number(process.env.OP_PORT ?? 0), '127.0.0.1', () => {
  const { port } = server.address();
  const issuer = process.env.OP_ISSUER || `http://127.0.0.1:${port}`;
  const provider = new Provider(issuer, {
    clients: clients.map((c) => ({
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
      ...c,
    })),
    jwks: { keys: [jwk] },
    cookies: { keys: [crypto.randomBytes(32).toString('hex')] },
    pkce: { required: () => true },
    ttl: { IdToken: Number(process.env.OP_ID_TOKEN_TTL ?? 3600) },
    // The scopes' claims go into the ID token (the console reads only it).
    conformIdTokenClaims: false,
    claims: { openid: ['sub', 'preferred_username', 'groups'], email: ['email'], profile: ['name'] },
    findAccount: async (ctx, id) => ({
      accountId: id,
      claims: async () => ({ sub: id, preferred_username: id, name: id, ...(users[id] ?? {}) }),
    }),
    // First-party client: consent is granted without a page.
    loadExistingGrant: async (ctx) => {
      const grantId = ctx.oidc.result?.consent?.grantId
        || ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
      if (grantId) return ctx.oidc.provider.Grant.find(grantId);
      const grant = new ctx.oidc.provider.Grant({
        clientId: ctx.oidc.client.clientId,
        accountId: ctx.oidc.session.accountId,
      });
      grant.addOIDCScope('openid profile email');
      grant.addOIDCClaims(['preferred_username', 'groups', 'name', 'email']);
      await grant.save();
      return grant;
    },
    features: {
      devInteractions: { enabled: true },
      rpInitiatedLogout: { enabled: true },
    },
  });
  server.on('request', provider.callback());
  process.stdout.write(`listening ${port}\n`);
});
