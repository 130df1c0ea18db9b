defmodule LemonMCP do
  @moduledoc """
  LemonMCP for the BEAM: an MCP (Model Context Protocol) client whose engine
  is `liblemonmcp.so`, reached through a NIF.

    * `LemonMCP.Client` — a server started as a subprocess (stdio)
    * `LemonMCP.Client.HTTP` — Streamable HTTP
    * `LemonMCP.Client.SSE` — the legacy HTTP+SSE transport

  This is a library application: loading or starting `:lemon_mcp` starts no
  process. Every client is started, supervised and closed by the host.
  """

  @doc """
  What this build supports, as the library reports it: `"version"`,
  `"abi_version"`, `"transports"`, `"protocol_versions"`,
  `"protocol_modes"`, `"client_capabilities"`, `"auth_flows"`,
  `"result_formats"`. Starts nothing.
  """
  @spec features() :: map()
  def features do
    {:ok, features} = LemonMCP.NIF.features()
    features
  end

  @doc "The library version, e.g. `\"0.1.0\"`."
  @spec version() :: String.t()
  def version, do: LemonMCP.NIF.version()

  @doc """
  The library's live resources: `%{"goroutines", "live_clients",
  "live_hosts", "live_queues", "pending_calls", "result_cache" => %{"hits",
  "misses"}}`
  (see `lmcp_diagnostics` in the C header).
  """
  @spec diagnostics() :: map()
  def diagnostics do
    {:ok, d} = LemonMCP.NIF.diagnostics()
    d
  end
end
