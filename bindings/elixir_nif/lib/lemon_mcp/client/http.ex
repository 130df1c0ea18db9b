defmodule LemonMCP.Client.HTTP do
  @moduledoc """
  An MCP client over Streamable HTTP, with the API of `LemonMCP.Client`.

      {:ok, c} = LemonMCP.Client.HTTP.start_link(url: "https://example.com/mcp",
                                                 headers: [{"x-api-key", "..."}])

  Options: `:url` (required), `:headers` (a list of `{name, value}` or a
  map), `:oauth`, `:store` (below), and the options every client
  has (`:client_name`, `:client_version`, `:capabilities`, `:timeout_ms`,
  `:ready_timeout_ms`, `:subscriber`, `:name`, ...). As in the `lemon_mcp`
  library this one replaces, `start_link/1` returns once the handshake is
  done, bounded by `:timeout`
  (which also becomes the library's handshake bound unless
  `:ready_timeout_ms` is given), and fails with its error — a server that
  wants authorization that could not be obtained gives
  `{:error, {:auth_required, metadata}}`, `metadata` being what discovery
  learned, with string keys: `"resource"`, `"authorization_servers"`,
  `"resource_metadata_url"`, `"www_authenticate"`, `"scope"`, `"error"`,
  and `"authorization_server_metadata"` (a list of the servers' RFC 8414
  documents, each with `"issuer"` and `"metadata_url"`). Never a token. A
  request that meets a 401 the library cannot answer returns the same
  error.

  It needs a library built with the Streamable HTTP transport
  (`"streamable_http"` in `LemonMCP.features()["transports"]`); otherwise
  `start_link/1` returns `{:error, {:unsupported, message}}`.

  ## OAuth (`:oauth`, a keyword list or a string-keyed map)

  The library runs discovery (RFC 9728, RFC 8414), refreshes first after a
  401, then runs the flow, and retries the request once.

    * `:client_id`, `:client_secret` — pre-registered credentials (without
      them the library may use dynamic registration)
    * `:client_issuer` — the issuer `client_id` is registered with
    * `:token_auth_method` — `:client_secret_post` (`:post`, `"post"`; the
      default whenever a secret is given, as in the library this one
      replaces), `:client_secret_basic`
      (`:basic`, `"basic"`), `:none`, `:private_key_jwt`, or `:auto` (the
      library chooses from the server's metadata)
    * `:scope` (a space-separated string) or `:scopes` (a list) — requested
      when the server's challenge names none
    * `:redirect_uri` — loopback http or https; required by the
      authorization code flow
    * `:flow` — `:auto` (the default: the authorization code flow when a
      provider is given, else client credentials when a secret is),
      `:client_credentials`, `:authorization_code` (`:pkce`,
      `"authorization_code_pkce"`)
    * `:refresh_token` — one the host already holds
    * `:authorization_code_provider` (alias `:auth_code_provider`) — a
      function of arity 1 (or 0) that runs the browser step. It gets
      `%{authorization_url:, authorization_endpoint:, issuer:, client_id:,
      redirect_uri:, scope:, resource:, state:, code_challenge:,
      code_challenge_method: "S256", code_verifier:}`, opens
      `authorization_url` and returns where the browser was sent:
      `{:ok, %{code: code, state: state}}` (string keys too; `:iss` when
      the server sent one), `{:ok, %{redirect_url: url}}` (the whole
      redirect URL, query included), or `{:ok, %{error: e, state: state}}`.
      **Every answer must carry the state** (which the library then checks
      against the request's): the `lemon_mcp` library this one replaces
      accepted
      `{:ok, "code"}` and a bare `"code"` without any state check; here
      they, a map without `:state`, `{:error, _}`, anything else, and a
      raise or throw fail the authorization, so the start (or the call)
      returns `{:error, {:auth_required, metadata}}`.
    * `:private_key_jwt` — `[key_pem:, kid:, alg:]`
    * `:dpop` — DPoP (RFC 9449): `true` (an ephemeral ES256 key per
      client), or `[key_pem: pem, alg: "ES256"]` (a PKCS#8, PKCS#1 or SEC 1
      key to keep, a secret; `alg` defaults to ES256 or the key's). Every
      token request carries a proof; a DPoP-bound token is sent as
      `Authorization: DPoP` with a fresh proof. A shared token store needs
      `key_pem`, the same key in every process (`true` is an error there).
    * `:authorization_timeout_ms` (300 000), `:max_step_ups` (2),
      `:allow_insecure_http` (false), `:client_name`,
      `:client_metadata_url`

  With a provider and neither `:timeout` nor `:ready_timeout_ms`, the
  handshake may last the whole authorization timeout (plus 30 s).

  ## Shared token stores (`oauth: [token_store: ...]`)

  Processes (BEAM nodes, workers, command-line runs) that share one
  grant name the same store, and then never redeem a refresh token twice:
  before refreshing, and after a 401, each reloads the store and adopts a
  newer token another process stored (docs/configuration.md, "Shared token
  stores"). `:token_store` is the library's `auth.token_store` object, as a
  map or keyword list (atom or string keys; atom values become strings):

      oauth: [client_id: "my-app", refresh_token: rt,
              token_store: %{type: "file", path: "/var/lib/my-app/mcp-tokens.json"}]

    * `type: "file", path: p` — one machine; `type: "postgres", url: u`
      or `type: "redis", url: u` — many machines
    * `key:` — names the grant in the store (default: the server's URL and
      the client id); `lease_ms:` — how long a refresh's lease lasts
    * `type: "app"` — the application's store, answered by `:store` below
      (with `key:` and `lease_ms:` as above)
    * `encryption: %{key_env: "NAME", previous_key_envs: [...]}` — seals
      the grant at rest (AES-256-GCM)

  The library checks the object and names what is wrong in it; the string
  forms and `:oauth_token_cache` (`:oauth_token_loader`,
  `:oauth_token_persister`) of earlier releases are refused with what to
  write instead (docs/migrating.md).

  ## The application's store (`:store`)

  `store: {load, save}` answers the library's `store_load` / `store_save`
  (`LemonMCP.Store`, docs/app-requests.md): the grant is kept in the
  application's own storage (a database table, an `Agent`, ...), shared by
  every process that gives the same store. `load.(collection, key)`
  returns `{:ok, {document, version}}` or `{:ok, nil}`;
  `save.(collection, key, expected_version, document)` stores the document
  (opaque: keep it as it is, a secret) only if the stored version is still
  `expected_version`, in one atomic step, and returns `{:ok, new_version}`,
  or `{:conflict, stored_document, stored_version}`. A raise or any other
  answer fails that request (the library never refreshes on a store it
  could not read or write).

      {:ok, agent} = Agent.start_link(fn -> %{} end)
      load = fn c, k -> {:ok, Agent.get(agent, &Map.get(&1, {c, k}))} end

      save = fn c, k, expected, doc ->
        Agent.get_and_update(agent, fn docs ->
          case Map.get(docs, {c, k}) do
            {_, ^expected} -> {{:ok, expected + 1}, Map.put(docs, {c, k}, {doc, expected + 1})}
            nil when expected == 0 -> {{:ok, 1}, Map.put(docs, {c, k}, {doc, 1})}
            {stored, version} -> {{:conflict, stored, version}, docs}
            nil -> {{:conflict, nil, 0}, docs}
          end
        end)
      end

      LemonMCP.Client.HTTP.start_link(url: url,
        oauth: [client_id: "my-app", refresh_token: rt, token_store: %{type: "app", key: "user-42"}],
        store: {load, save})

  The provider, `load` and `save` run in their own processes, never inside
  the client's loop: `state/1` and other requests answer meanwhile.

  Every other function is `LemonMCP.Client`'s, on the pid this returns.
  """

  use LemonMCP.Client.Delegates, transport: :streamable_http
end
