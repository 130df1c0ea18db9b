defmodule LemonMCP.Client.SSE do
  @moduledoc """
  An MCP client over the legacy HTTP+SSE transport (2024-11-05), with the API of `LemonMCP.Client`.

      {:ok, c} = LemonMCP.Client.SSE.start_link(url: "https://example.com/sse",
                                                headers: [{"x-api-key", "..."}])

  Options: `:url` (required: the SSE stream), `:headers` (a list of `{name, value}` or a
  map), and the options every client has (`:client_name`,
  `:client_version`, `:capabilities`, `:timeout_ms`, `:ready_timeout_ms`,
  `:subscriber`, `:name`, ...). As in the `lemon_mcp` library this one replaces, `start_link/1` returns once the handshake is done (bounded by `:timeout`), and fails with its error.

  It needs a library built with the legacy SSE transport
  (`"sse"` in `LemonMCP.features()["transports"]`); otherwise
  `start_link/1` returns `{:error, {:unsupported, message}}`. The legacy
  transport has no OAuth; OAuth options give `{:error, {:unsupported, msg}}`.

  Every other function is `LemonMCP.Client`'s, on the pid this returns.
  """

  use LemonMCP.Client.Delegates, transport: :sse
end
