defmodule LemonMCP.Client.HTTP do
  @moduledoc """
  An MCP client over Streamable HTTP, with the API of `LemonMCP.Client`.

      {:ok, c} = LemonMCP.Client.HTTP.start_link(url: "https://example.com/mcp",
                                                 headers: [{"x-api-key", "..."}])

  Options: `:url` (required), `:headers` (a list of `{name, value}` or a
  map), and the options every client has (`:client_name`,
  `:client_version`, `:capabilities`, `:timeout_ms`, `:ready_timeout_ms`,
  `:subscriber`, `:name`, ...). As in the seed, `start_link/1` returns once the handshake is done (bounded by `:timeout`), and fails with its error.

  It needs a library built with the Streamable HTTP transport
  (`"streamable_http"` in `LemonMCP.features()["transports"]`); otherwise
  `start_link/1` returns `{:error, {:unsupported, message}}`. OAuth options
  (`:oauth`, `:oauth_token_cache`) give `{:error, {:unsupported, message}}`
  until the library has OAuth.

  Every other function is `LemonMCP.Client`'s, on the pid this returns.
  """

  use LemonMCP.Client.Delegates, transport: :streamable_http
end
