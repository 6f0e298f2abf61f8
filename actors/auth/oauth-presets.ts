// actors/auth/oauth-presets.ts: the built-in OAuth clients of the vendors whose login third-party tools
// use with a public client (docs/oauth.md lists the facts and their sources). A preset applies when the
// realm config has no `[auth.oauth.<provider>]`, and each field the config sets replaces the preset's.
// None of these vendors offers RFC 8628 device authorization to these clients, so no preset has a
// device endpoint. Pure data: auth-config.ts merges it with the config.
import type { OAuthProviderConfig } from '../../contracts/auth.ts';

export interface OAuthPreset {
  /** What the login signs in to, for GET /auth/oauth/providers and the docs. */
  description: string;
  config: OAuthProviderConfig & { client_id: string; token_endpoint: string; authorization_endpoint: string };
}

export const OAUTH_PRESETS: Readonly<Record<string, OAuthPreset>> = Object.freeze({
  anthropic: {
    description: 'Claude Pro/Max subscription login with the public client of Claude Code',
    config: {
      client_id: '9d1c250a-e61b-44d9-88ed-5944d1962f5e',
      authorization_endpoint: 'https://claude.ai/oauth/authorize',
      token_endpoint: 'https://platform.claude.com/v1/oauth/token',
      scopes: ['org:create_api_key', 'user:profile', 'user:inference'],
      // Claude Code asks the consent page to also show the code (for its paste-the-code fallback).
      authorize_params: { code: 'true' },
      // The token endpoint refuses a code exchange that does not carry the state of the authorize step.
      exchange_sends_state: true,
    },
  },
  openai: {
    description: 'ChatGPT account login with the public client of the Codex CLI',
    config: {
      client_id: 'app_EMoamEEZ73f0CkXaXp7hrann',
      authorization_endpoint: 'https://auth.openai.com/oauth/authorize',
      token_endpoint: 'https://auth.openai.com/oauth/token',
      scopes: ['openid', 'profile', 'email', 'offline_access'],
      authorize_params: { id_token_add_organizations: 'true', codex_cli_simplified_flow: 'true' },
      // The client allow-lists these two loopback callbacks only (the Codex CLI's port and its fallback).
      redirect_uris: ['http://localhost:1455/auth/callback', 'http://localhost:1457/auth/callback'],
    },
  },
  gemini: {
    description: 'Google account login with the installed-app client of the Gemini CLI (Code Assist scopes)',
    config: {
      client_id: '681255809395-oo8ft2oprdrnp9e3aqf6av3hmdib135j.apps.googleusercontent.com',
      // An installed application's client secret is public by design (Google's OAuth docs for installed
      // apps); it is still never logged or shown (GET /auth/oauth/providers says has_client_secret).
      client_secret: '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',
      authorization_endpoint: 'https://accounts.google.com/o/oauth2/v2/auth',
      token_endpoint: 'https://oauth2.googleapis.com/token',
      scopes: [
        'https://www.googleapis.com/auth/cloud-platform',
        'https://www.googleapis.com/auth/userinfo.email',
        'https://www.googleapis.com/auth/userinfo.profile',
      ],
      // Without offline access Google issues no refresh token.
      authorize_params: { access_type: 'offline' },
    },
  },
});
