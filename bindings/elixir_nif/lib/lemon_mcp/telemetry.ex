defmodule LemonMCP.Telemetry do
  @moduledoc """
  `:telemetry`-style events of LemonMCP, in that ecosystem's conventions.

    * `[:lemon_mcp, :call, :start]`: measurements `%{system_time:,
      monotonic_time:}`; metadata `%{client:, method:, target:,
      telemetry_span_context:}` (`target` is the tool or prompt name or the
      resource URI, else `nil`).
    * `[:lemon_mcp, :call, :stop]`: measurements `%{duration:,
      monotonic_time:}` (native time units); the start's metadata plus
      `result: :ok | :error` and `error_type:` (`nil`, `"tool_error"`, the
      server's JSON-RPC code as a string, or the error reason's name, as
      the core's telemetry records and the Python spans name it).
    * `[:lemon_mcp, :call, :exception]`: the call raised or exited:
      `%{duration:}`; metadata plus `kind:`, `reason:`, `stacktrace:`.
    * `[:lemon_mcp, :server, :restart]`: a supervised server restarts (a
      `LemonMCP.Host`'s): `%{count: 1}`; `%{client:, server:, reason:,
      attempt:}` (`client` is the host's pid, `server` its server's name).
    * `[:lemon_mcp, :server, :failure]`: a handshake failed: `%{count: 1}`;
      `%{client:, server:, reason:}` (`server` is `nil` for a lone client).
    * `[:lemon_mcp, :session, :stop]`: a ready session ended (closed, lost
      to a restart or for good, or the process stopped):
      `%{duration:, monotonic_time:}` (native time units, from `:ready`);
      `%{client:, server:, protocol_version:, error_type:}` (`error_type`
      `nil` when closed or stopped, `"closed"` when lost, as the core's
      `session` record and Python's `mcp.client.session.duration` name it).

  A `LemonMCP.Host`'s calls are events too, with the host's pid as
  `client:` (and `server:` for `LemonMCP.Host.request/5`).

  Events go to the module named by `config :lemon_mcp, :telemetry_module`
  (any module with `execute/3`), else to `:telemetry` when it is loaded
  (this project has no Hex dependency; an application that has
  `:telemetry` gets the events with no setup), else nowhere, at the cost of
  one lookup per call.

  A call's `trace:` option (`%{"traceparent" => ..., "tracestate" => ...,
  "baggage" => ...}`) is carried by the library in `params._meta` of every
  request of the call (docs/call-options.md#trace).
  """

  @doc "The module events go to, or `nil` when none is there."
  @spec handler() :: module() | nil
  def handler do
    case Application.get_env(:lemon_mcp, :telemetry_module) do
      nil -> if function_exported?(:telemetry, :execute, 3), do: :telemetry, else: nil
      mod -> mod
    end
  end

  @doc "Sends one event to `handler/0`, if any."
  @spec execute([atom()], map(), map()) :: :ok
  def execute(event, measurements, metadata) do
    case handler() do
      nil -> :ok
      mod -> mod.execute(event, measurements, metadata)
    end

    :ok
  end

  @doc """
  Runs `fun` (a call returning `{:ok, result}` or `{:error, reason}`) between
  a `:start` and a `:stop` (or `:exception`) event. Without a handler it
  only runs `fun`.
  """
  @spec span(pid() | atom() | term(), String.t(), map() | nil, (() -> term()), map()) :: term()
  def span(client, method, params, fun, extra \\ %{}) do
    case handler() do
      nil -> fun.()
      mod -> traced(mod, client, method, params, fun, extra)
    end
  end

  defp traced(mod, client, method, params, fun, extra) do
    meta =
      Map.merge(extra, %{
        client: client,
        method: method,
        target: target(method, params),
        telemetry_span_context: make_ref()
      })

    start = System.monotonic_time()
    mod.execute([:lemon_mcp, :call, :start], %{system_time: System.system_time(), monotonic_time: start}, meta)

    try do
      fun.()
    catch
      kind, reason ->
        now = System.monotonic_time()

        mod.execute(
          [:lemon_mcp, :call, :exception],
          %{duration: now - start, monotonic_time: now},
          Map.merge(meta, %{kind: kind, reason: reason, stacktrace: __STACKTRACE__})
        )

        :erlang.raise(kind, reason, __STACKTRACE__)
    else
      reply ->
        now = System.monotonic_time()
        {result, error_type} = outcome(method, reply)

        mod.execute(
          [:lemon_mcp, :call, :stop],
          %{duration: now - start, monotonic_time: now},
          Map.merge(meta, %{result: result, error_type: error_type})
        )

        reply
    end
  end

  @doc false
  # A client's :restarting or :failed event, as a [:lemon_mcp, :server, _] event.
  def server_event(client, :restarting, payload) do
    execute([:lemon_mcp, :server, :restart], %{count: 1}, %{
      client: client,
      server: field(payload, "server"),
      reason: field(payload, "reason"),
      attempt: field(payload, "attempt")
    })
  end

  def server_event(client, :failed, payload) do
    execute([:lemon_mcp, :server, :failure], %{count: 1}, %{
      client: client,
      server: field(payload, "server"),
      reason: field(payload, "message")
    })
  end

  @doc false
  # Sessions from a client's (or a host's servers') events: `sessions` maps
  # the server (nil for a lone client) to {started, protocol_version}.
  # :ready starts one; :closed and :restarting end it with a
  # [:lemon_mcp, :session, :stop] event. Returns the new map.
  def session_event(sessions, _client, :ready, payload) do
    server = if is_binary(field(payload, "server")), do: field(payload, "server")
    info = field(payload, "info") || field(payload, "server")
    Map.put(sessions, server, {System.monotonic_time(), field(info, "protocolVersion")})
  end

  def session_event(sessions, client, kind, payload) when kind in [:closed, :restarting] do
    server = if is_binary(field(payload, "server")), do: field(payload, "server")
    lost = kind == :restarting or field(payload, "requested") != true
    end_session(sessions, client, server, if(lost, do: "closed"))
  end

  def session_event(sessions, _client, _kind, _payload), do: sessions

  @doc false
  # Ends every session still open (the process stops).
  def end_sessions(sessions, client) do
    Enum.reduce(Map.keys(sessions), sessions, &end_session(&2, client, &1, nil))
  end

  defp end_session(sessions, client, server, error_type) do
    case Map.pop(sessions, server) do
      {nil, _} ->
        sessions

      {{started, version}, rest} ->
        now = System.monotonic_time()

        execute([:lemon_mcp, :session, :stop], %{duration: now - started, monotonic_time: now}, %{
          client: client,
          server: server,
          protocol_version: version,
          error_type: error_type
        })

        rest
    end
  end

  defp field(payload, key) when is_map(payload), do: Map.get(payload, key)
  defp field(_payload, _key), do: nil

  @doc false
  def target(method, params) when is_map(params) do
    key =
      case method do
        m when m in ["tools/call", "prompts/get"] -> "name"
        m when m in ["resources/read", "resources/subscribe", "resources/unsubscribe"] -> "uri"
        _ -> nil
      end

    case key && (Map.get(params, key) || Map.get(params, String.to_atom(key))) do
      v when is_binary(v) -> v
      _ -> nil
    end
  end

  def target(_method, _params), do: nil

  defp outcome("tools/call", {:ok, %{"isError" => true}}), do: {:error, "tool_error"}
  defp outcome(_method, {:ok, _}), do: {:ok, nil}
  defp outcome(_method, {:error, reason}), do: {:error, error_type(reason)}
  defp outcome(_method, _other), do: {:ok, nil}

  defp error_type({:rpc_error, %{code: code}}) when is_integer(code), do: Integer.to_string(code)
  defp error_type(:connection_closed), do: "closed"
  defp error_type({name, _}) when is_atom(name), do: Atom.to_string(name)
  defp error_type({name, _, _}) when is_atom(name), do: Atom.to_string(name)
  defp error_type(name) when is_atom(name), do: Atom.to_string(name)
  defp error_type(_), do: "error"
end
