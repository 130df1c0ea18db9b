defmodule LemonMCP.Telemetry do
  @moduledoc """
  `:telemetry`-style events of LemonMCP, in that ecosystem's conventions.

    * `[:lemon_mcp, :call, :start]`: measurements `%{system_time:,
      monotonic_time:}`; metadata `%{client:, method:, target:,
      telemetry_span_context:}` (`target` is the tool or prompt name or the
      resource URI, else `nil`).
    * `[:lemon_mcp, :call, :stop]`: measurements `%{duration:,
      monotonic_time:}` (native time units); the start's metadata plus
      `result: :ok | :error`, `error_type:` (`nil`, `"tool_error"`, the
      server's JSON-RPC code as a string, or the error reason's name),
      `protocol_version:`, `session_id:` (Streamable HTTP, else `nil`) and
      `request_id:` (the call's last JSON-RPC id). These, `target:` and a
      host's `server:` come from the core's telemetry record of the call,
      the same the C handler receives and the Python spans are made from:
      a host's `call_tool` is named by the tool's own name and its server,
      at `:start` too (from the host's catalogue, or the `server__tool`
      prefix before any list), not by the exposed `server__tool`.
    * `[:lemon_mcp, :call, :exception]`: the call raised or exited:
      `%{duration:}`; metadata plus `kind:`, `reason:`, `stacktrace:`.
    * `[:lemon_mcp, :server, :restart]`: a supervised server restarts (a
      `LemonMCP.Host`'s): `%{count: 1}`; `%{client:, server:, reason:,
      attempt:}` (`client` is the host's pid, `server` its server's name).
    * `[:lemon_mcp, :server, :failure]`: a handshake failed: `%{count: 1}`;
      `%{client:, server:, reason:}` (`server` is `nil` for a lone client).
    * `[:lemon_mcp, :session, :stop]`: a ready session ended (closed, lost
      to a restart or for good, or the process stopped):
      `%{duration:, monotonic_time:}` (native time units; the duration is
      the core's `session` record's, from the handshake);
      `%{client:, server:, protocol_version:, error_type:}` from the record
      (`error_type` `nil` when closed or stopped, `"closed"` when lost, as
      Python's `mcp.client.session.duration` names it).

  A `LemonMCP.Host`'s calls are events too, with the host's pid as
  `client:` (and `server:`).

  The records: a client or host started while events go somewhere
  registers the library's telemetry handler (the NIF sends each record to
  the owning process; with a handler the core measures every call), and
  the owner hands a call's record to the caller with its reply (a direct
  client call asks the owner for it once its completion came: one more
  message per call, only then). One started before a handler was
  configured registers it only when a session becomes ready or is closed
  or stopped (for the session's record): its call `:stop` events carry
  what Elixir knows (no protocol version, session or request id; a host's
  exposed tool name).

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
  Runs `fun` (a call returning `{:ok, result}` or `{:error, reason}`, or
  `{:recorded, reply, record}` when the owner had the call's telemetry
  record) between a `:start` and a `:stop` (or `:exception`) event. Without
  a handler it only runs `fun`. A `fun` of one argument is told whether
  events go out (so that it asks for the record only then). What the core measured (the tool's own
  name on a host, the server, session, request id, protocol version,
  error type) comes from the record.
  """
  @spec span(
          pid() | atom() | term(),
          String.t(),
          map() | nil | (() -> {map(), map()}),
          (() -> term()) | (boolean() -> term()),
          map()
        ) ::
          term()
  def span(client, method, params, fun, extra \\ %{}) do
    case handler() do
      nil -> run(fun, false) |> unrecorded()
      mod -> traced(mod, client, method, params, fun, extra)
    end
  end

  defp traced(mod, client, method, params, fun, extra) do
    {params, extra} = resolved(params, extra)

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
      run(fun, true)
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
        {reply, record} = recorded(reply)
        {result, error_type} = outcome(method, reply)

        mod.execute(
          [:lemon_mcp, :call, :stop],
          %{duration: now - start, monotonic_time: now},
          meta |> Map.merge(%{result: result, error_type: error_type}) |> from_record(record)
        )

        reply
    end
  end

  # params given as a function are worked out only when events go out (a
  # host's call_tool asks its process for the tool's own name and server):
  # it returns {params, more metadata}.
  defp resolved(params, extra) when is_function(params, 0) do
    {params, more} = params.()
    {params, Map.merge(extra, more)}
  end

  defp resolved(params, extra), do: {params, extra}

  defp run(fun, _traced) when is_function(fun, 0), do: fun.()
  defp run(fun, traced), do: fun.(traced)

  defp recorded({:recorded, reply, record}), do: {reply, record}
  defp recorded(reply), do: {reply, nil}

  defp unrecorded({:recorded, reply, _record}), do: reply
  defp unrecorded(reply), do: reply

  # The record's view wins: it is the core's, the same the C handler and the
  # Python spans get (a host's tool by its own name, not the exposed one).
  defp from_record(meta, record) when is_map(record) do
    Map.merge(meta, %{
      target: record["target"] || meta.target,
      server: record["server"] || meta[:server],
      protocol_version: record["protocol_version"],
      session_id: record["session_id"],
      request_id: record["request_id"],
      error_type: record["error_type"]
    })
  end

  defp from_record(meta, _record), do: meta

  @doc false
  # Whether an owner should register the library's telemetry handler: only
  # when events go somewhere (with a handler the core measures every call).
  def records?, do: handler() != nil

  @doc false
  # An owner's reply to a call whose telemetry record it holds.
  def with_record(reply, nil), do: reply
  def with_record(reply, record), do: {:recorded, reply, record}

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
  # The core's "session" record (a ready session ended: closed, lost, or
  # its owner stopped) as a [:lemon_mcp, :session, :stop] event: the
  # duration, protocol version and error type are the record's, measured
  # by the core from the handshake, as the C handler and Python's
  # mcp.client.session.duration get them.
  def session_record(client, record) do
    duration = System.convert_time_unit(record["duration_ns"] || 0, :nanosecond, :native)

    execute([:lemon_mcp, :session, :stop], %{duration: duration, monotonic_time: System.monotonic_time()}, %{
      client: client,
      server: record["server"],
      protocol_version: record["protocol_version"],
      error_type: record["error_type"]
    })
  end

  @doc false
  # An owner started before events went anywhere has no telemetry handler
  # in the library; once they do, it registers one (`register.()`), so the
  # core reports the session's end. Called when a session becomes ready
  # and before a close or a stop: the core reports a session's end only to
  # a handler set by then. Returns whether one is registered.
  def register_late(true, _register), do: true
  def register_late(false, register), do: records?() and register.() == :ok

  @doc false
  # The session records a close or free delivered to the stopping owner
  # (`tag` its records' tag), as events: the owner's loop no longer runs.
  def drain_session_records(client, tag) do
    receive do
      {:lmcp_telemetry, ^tag, :session, record} ->
        session_record(client, record)
        drain_session_records(client, tag)
    after
      0 -> :ok
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
  # A failed call's error type is the core's: its record's, or its error
  # object's (failed_record/2); never worked out here from the reason.
  defp outcome(_method, {:error, _reason}), do: {:error, nil}
  defp outcome(_method, _other), do: {:ok, nil}

  @doc false
  # The record of a call the library failed before it made one: the
  # error's type, from the library's error object (nil when it gave none).
  def failed_record(0, _info), do: nil
  def failed_record(_status, %{"type" => type}) when is_binary(type), do: %{"error_type" => type}
  def failed_record(_status, _info), do: nil
end
