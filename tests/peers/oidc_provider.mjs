// A real OpenID-certified authorization server (oidc-provider) and a small protected
// resource in front of it, for tests/test_oauth_oidc_provider.py.
//
// Started by the test on 127.0.0.1 with ephemeral ports; prints one JSON line
// {"issuer": ..., "resource": ..., "sseResource": ...} on stdout once both listen, then
// serves until killed.
//
// The authorization server: PKCE (required, S256), dynamic client registration, RFC 8707
// resource indicators (tokens bound to the resource as their audience), RFC 9207 iss,
// refresh-token rotation, client credentials. Its login and consent pages are replaced by
// an interaction route that logs the test user in and grants the requested resource
// scopes at once, so the test follows the redirects like a browser would.
//
// Pre-registered clients for the grants without a browser: `cc-basic` (client
// credentials, client_secret_basic) and, when MCP_TEST_CLIENT_JWK holds a public JWK,
// `cc-jwt` (client credentials, private_key_jwt with that key). DPoP (RFC 9449) is on,
// with server nonces required at the token endpoint.
//
// The protected resource: RFC 9728 metadata at its path-aware well-known URI, and
// POST /mcp answering 401 with a Bearer challenge unless the access token (looked up in
// the provider) was issued for this resource; a DPoP-bound token must come with a DPoP
// proof signed by the bound key (thumbprint), for this request (htm, htu) and this
// token (ath). Then 200 with the token's facts as JSON; a JSON-RPC message is answered
// as a minimal MCP server would (initialize, notifications 202, tools/list with one tool
// `whoami`, tools/call answering the token's facts as text; GET/DELETE 405), so
// tests/shells/test_oauth_shells.py drives it through `connect` in both shells.
//
// The same server over the deprecated HTTP+SSE transport, a resource of its own
// (`sseResource`, its metadata at /.well-known/oauth-protected-resource/sse): GET /sse
// and the POSTs to the endpoint it announces answer 401 without a token for it
// (tests/shells/test_oauth_sse.py). Bearer only there.

import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import * as jose from 'jose';
import Provider, { errors } from 'oidc-provider';

function listen(server) {
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve(server.address().port));
  });
}

const asServer = http.createServer();
const rsServer = http.createServer();
const asPort = await listen(asServer);
const rsPort = await listen(rsServer);
const issuer = `http://127.0.0.1:${asPort}`;
const resource = `http://127.0.0.1:${rsPort}/mcp`;
// The same MCP server over the deprecated HTTP+SSE transport: a resource of its own.
const sseResource = `http://127.0.0.1:${rsPort}/sse`;
const RESOURCE_SCOPES = 'mcp:read mcp:write';

const clients = [
  {
    client_id: 'cc-basic',
    client_secret: 'cc-basic-secret',
    grant_types: ['client_credentials'],
    redirect_uris: [],
    response_types: [],
    token_endpoint_auth_method: 'client_secret_basic',
  },
];
if (process.env.MCP_TEST_CLIENT_JWK) {
  clients.push({
    client_id: 'cc-jwt',
    grant_types: ['client_credentials'],
    redirect_uris: [],
    response_types: [],
    token_endpoint_auth_method: 'private_key_jwt',
    token_endpoint_auth_signing_alg: 'ES256',
    jwks: { keys: [JSON.parse(process.env.MCP_TEST_CLIENT_JWK)] },
  });
}

const provider = new Provider(issuer, {
  clients,
  cookies: { keys: ['mcp-proto-test-cookie-key'] },
  scopes: ['openid', 'offline_access'],
  features: {
    devInteractions: { enabled: false },
    registration: { enabled: true },
    clientCredentials: { enabled: true },
    dPoP: { enabled: true, nonceSecret: randomBytes(32), requireNonce: () => true },
    resourceIndicators: {
      enabled: true,
      defaultResource: async () => undefined,
      useGrantedResource: async () => true,
      getResourceServerInfo: async (ctx, indicator) => {
        if (indicator !== resource && indicator !== sseResource) {
          throw new errors.InvalidTarget();
        }
        return {
          scope: RESOURCE_SCOPES,
          audience: indicator,
          accessTokenTTL: 3600,
          accessTokenFormat: 'opaque',
        };
      },
    },
  },
  pkce: { required: () => true },
  rotateRefreshToken: true,
  issueRefreshToken: async (ctx, client) => client.grantTypeAllowed('refresh_token'),
  findAccount: async (ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
  interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
});

const callback = provider.callback();
asServer.on('request', async (req, res) => {
  if (!req.url.startsWith('/interaction/')) return callback(req, res);
  try {
    const { prompt, params, session, grantId } = await provider.interactionDetails(req, res);
    const accountId = session?.accountId ?? 'test-user';
    const grant = grantId
      ? await provider.Grant.find(grantId)
      : new provider.Grant({ accountId, clientId: params.client_id });
    const requested = String(params.scope ?? '').split(' ').filter(Boolean);
    const oidc = requested.filter((s) => s === 'openid' || s === 'offline_access');
    if (oidc.length) grant.addOIDCScope(oidc.join(' '));
    if (params.resource) grant.addResourceScope(params.resource, RESOURCE_SCOPES);
    const result = { consent: { grantId: await grant.save() } };
    if (prompt.name === 'login' || !session?.accountId) result.login = { accountId };
    await provider.interactionFinished(req, res, result, { mergeWithLastSubmission: true });
  } catch (err) {
    res.statusCode = 500;
    res.end(String(err));
  }
});

// What a request's token says, when it is good for `audience`; else undefined.
async function tokenFacts(req, audience) {
  const auth = req.headers.authorization ?? '';
  const [scheme, value] = auth.split(' ', 2);
  const token = value
    ? (await provider.AccessToken.find(value)) ?? (await provider.ClientCredentials.find(value))
    : undefined;
  const aud = token ? [].concat(token.aud ?? []) : [];
  let ok = Boolean(token) && aud.includes(audience);
  const bound = token?.jkt;
  if (ok && (bound || scheme === 'DPoP')) {
    ok = scheme === 'DPoP' && bound && (await dpopProofOk(req, value, bound));
  } else if (ok) {
    ok = scheme === 'Bearer';
  }
  if (!ok) return undefined;
  return { aud, scope: token.scope, clientId: token.clientId, dpop: Boolean(bound) };
}

// A minimal MCP server's answer to a JSON-RPC request (undefined for a notification).
function answerTo(message, facts) {
  if (message.id === undefined) return undefined;
  const ok = (result) => ({ jsonrpc: '2.0', id: message.id, result });
  if (message.method === 'initialize') {
    return ok({
      protocolVersion: message.params.protocolVersion,
      capabilities: { tools: {} },
      serverInfo: { name: 'oidc-protected-resource', version: '1' },
    });
  }
  if (message.method === 'tools/list') {
    return ok({ tools: [{ name: 'whoami', inputSchema: { type: 'object' } }] });
  }
  if (message.method === 'tools/call') {
    return ok({ content: [{ type: 'text', text: JSON.stringify(facts) }] });
  }
  return { jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'Method not found' } };
}

async function readJson(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return undefined;
  }
}

function refuse(res, prm) {
  res.statusCode = 401;
  res.setHeader('WWW-Authenticate', `Bearer resource_metadata="${prm}"`);
  res.end();
}

// HTTP+SSE sessions: id -> the event stream's response.
const sessions = new Map();
let nextSession = 1;

rsServer.on('request', async (req, res) => {
  const prm = `http://127.0.0.1:${rsPort}/.well-known/oauth-protected-resource/mcp`;
  const ssePrm = `http://127.0.0.1:${rsPort}/.well-known/oauth-protected-resource/sse`;
  if (req.method === 'GET' && (req.url === '/.well-known/oauth-protected-resource/mcp'
      || req.url === '/.well-known/oauth-protected-resource/sse')) {
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify({
      resource: req.url.endsWith('/sse') ? sseResource : resource,
      authorization_servers: [issuer],
      scopes_supported: RESOURCE_SCOPES.split(' '),
    }));
    return;
  }
  if (req.url === '/sse' || req.url.startsWith('/messages?')) {
    // The deprecated HTTP+SSE transport (2024-11-05): the event stream and the POSTs
    // to its endpoint both need a token for this resource.
    const facts = await tokenFacts(req, sseResource);
    if (!facts) {
      refuse(res, ssePrm);
      return;
    }
    if (req.method === 'GET' && req.url === '/sse') {
      const id = String(nextSession++);
      sessions.set(id, res);
      res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store' });
      res.write(`event: endpoint\ndata: /messages?sid=${id}\n\n`);
      req.on('close', () => sessions.delete(id));
      return;
    }
    const stream = sessions.get(new URL(req.url, sseResource).searchParams.get('sid'));
    const message = req.method === 'POST' ? await readJson(req) : undefined;
    if (!stream || !message) {
      res.statusCode = stream ? 400 : 404;
      res.end();
      return;
    }
    res.statusCode = 202;
    res.end();
    const answer = answerTo(message, facts);
    if (answer) stream.write(`event: message\ndata: ${JSON.stringify(answer)}\n\n`);
    return;
  }
  if (req.url !== '/mcp') {
    res.statusCode = 404;
    res.end();
    return;
  }
  const facts = await tokenFacts(req, resource);
  if (!facts) {
    refuse(res, prm);
    return;
  }
  if (req.method !== 'POST') {
    res.statusCode = 405;
    res.end();
    return;
  }
  const message = await readJson(req);
  if (!message || typeof message.method !== 'string') {
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify(facts));
    return;
  }
  const answer = answerTo(message, facts);
  if (!answer) {
    res.statusCode = 202;
    res.end();
    return;
  }
  res.setHeader('Content-Type', 'application/json');
  res.end(JSON.stringify(answer));
});

async function dpopProofOk(req, accessToken, jkt) {
  const proof = req.headers.dpop;
  if (typeof proof !== 'string') return false;
  try {
    const { jwk, typ } = jose.decodeProtectedHeader(proof);
    if (typ !== 'dpop+jwt' || !jwk) return false;
    const { payload } = await jose.jwtVerify(proof, await jose.importJWK(jwk, 'ES256'));
    const ath = createHash('sha256').update(accessToken).digest('base64url');
    return (await jose.calculateJwkThumbprint(jwk)) === jkt
      && payload.htm === req.method
      && payload.htu === `http://127.0.0.1:${rsPort}/mcp`
      && payload.ath === ath;
  } catch {
    return false;
  }
}

process.stdout.write(`${JSON.stringify({ issuer, resource, sseResource })}\n`);
