defmodule LemonMCP.TelemetryTest do
  # Global state (the application's telemetry module, a :telemetry module
  # defined here): not async.
  use ExUnit.Case, async: false

  alias LemonMCP.Client
  alias LemonMCP.Test.Fixture
  alias LemonMCP.Test.TelemetryForwarder, as: Handler

  setup do
    Handler.listen()

    on_exit(fn ->
      Application.delete_env(:lemon_mcp, :telemetry_module)
      Handler.stop()
    end)

    %{c: Fixture.start!()}
  end

  defp receive_event(name, c) do
    receive do
      {:event, ^name, m, %{client: ^c} = md} -> {m, md}
    after
      10_000 -> flunk("no #{inspect(name)} event")
    end
  end

  test "calls are :start/:stop events through the configured module", %{c: c} do
    Application.put_env(:lemon_mcp, :telemetry_module, Handler)
    assert {:ok, [%{"text" => "hi"}]} = Client.call_tool(c, "echo", %{text: "hi"})
    {m, md} = receive_event([:lemon_mcp, :call, :start], c)
    assert is_integer(m.system_time) and is_integer(m.monotonic_time)
    assert %{method: "tools/call", target: "echo"} = md
    {m, stop} = receive_event([:lemon_mcp, :call, :stop], c)
    assert is_integer(m.duration) and m.duration >= 0
    assert %{method: "tools/call", target: "echo", result: :ok, error_type: nil} = stop
    assert stop.telemetry_span_context == md.telemetry_span_context

    assert {:error, {:tool_error, _}} = Client.call_tool(c, "fail", %{})
    _ = receive_event([:lemon_mcp, :call, :start], c)
    {_, stop} = receive_event([:lemon_mcp, :call, :stop], c)
    assert %{target: "fail", result: :error, error_type: "tool_error"} = stop

    assert {:error, {:rpc_error, %{code: code}}} = Client.request(c, "no/such_method", %{})
    _ = receive_event([:lemon_mcp, :call, :start], c)
    {_, stop} = receive_event([:lemon_mcp, :call, :stop], c)
    assert stop.error_type == Integer.to_string(code)
  end

  test "without a module nor :telemetry, nothing is sent", %{c: c} do
    refute function_exported?(:telemetry, :execute, 3)
    assert LemonMCP.Telemetry.handler() == nil
    assert {:ok, _} = Client.call_tool(c, "echo", %{text: "quiet"})
    refute_receive {:event, _, _, _}, 200
  end

  test "events go through :telemetry when it is loaded", %{c: c} do
    # A minimal stand-in for the :telemetry library, only in this test.
    Code.compile_string("""
    defmodule :telemetry do
      def execute(event, measurements, metadata),
        do: LemonMCP.Test.TelemetryForwarder.execute(event, measurements, metadata)
    end
    """)

    try do
      assert LemonMCP.Telemetry.handler() == :telemetry
      assert {:ok, _} = Client.call_tool(c, "echo", %{text: "via telemetry"})
      {_, md} = receive_event([:lemon_mcp, :call, :stop], c)
      assert md.target == "echo"
    after
      :code.purge(:telemetry)
      :code.delete(:telemetry)
      :code.purge(:telemetry)
    end

    assert LemonMCP.Telemetry.handler() == nil
  end

  test "a host call_tool's :start names the server's own tool, listed or not", _ do
    Application.put_env(:lemon_mcp, :telemetry_module, Handler)
    server = %{"command" => Fixture.path()}
    cfg = %{"tool_prefix" => "on_collision", "mcpServers" => %{"beta" => server}}
    {:ok, h} = LemonMCP.Host.start_link(cfg)
    :ok = LemonMCP.Host.await_ready(h, 10_000)
    # Before any list: the server__tool prefix, as the core routes it.
    assert {:ok, _} = LemonMCP.Host.call_tool(h, "beta__echo", %{text: "x"})
    {_, start} = receive_event([:lemon_mcp, :call, :start], h)
    assert %{server: "beta", target: "echo"} = start
    {_, stop} = receive_event([:lemon_mcp, :call, :stop], h)
    assert %{server: "beta", target: "echo"} = stop
    # After a list: the host's catalogue (under on_collision a name no
    # other server offers is not prefixed).
    {:ok, tools} = LemonMCP.Host.list_tools(h)
    assert Enum.find(tools, &(&1["name"] == "echo"))["server"] == "beta"
    assert {:ok, _} = LemonMCP.Host.call_tool(h, "echo", %{text: "y"})
    {_, start} = receive_event([:lemon_mcp, :call, :start], h)
    assert %{server: "beta", target: "echo"} = start
    LemonMCP.Host.stop(h)
  end

  test "a host call_tool's :start takes the route the library gives, never a split name", _ do
    # tool_prefix "never": the tool "r__x" of server "r" is called as given;
    # the name is not "<server>__<tool>", so nothing is known before a list
    # (splitting it named the tool "x"), and the catalogue tells after one.
    Application.put_env(:lemon_mcp, :telemetry_module, Handler)
    dir = Path.join(System.tmp_dir!(), "lmcp-ex-#{System.pid()}-route")
    File.mkdir_p!(dir)
    on_exit(fn -> File.rm_rf(dir) end)
    defs = Path.join(dir, "defs.json")
    File.write!(defs, ~s({"tools": [{"name": "r__x", "inputSchema": {"type": "object"}}]}))
    rugpull = Path.join(Path.dirname(Fixture.path()), "rugpull")
    cfg = %{"tool_prefix" => "never", "mcpServers" => %{"r" => %{"command" => rugpull, "args" => ["-defs", defs]}}}
    {:ok, h} = LemonMCP.Host.start_link(cfg)
    :ok = LemonMCP.Host.await_ready(h, 10_000)
    assert {:ok, _} = LemonMCP.Host.call_tool(h, "r__x", %{})
    {_, start} = receive_event([:lemon_mcp, :call, :start], h)
    assert start.target == "r__x" and Map.get(start, :server) == nil, inspect(start)
    {_, stop} = receive_event([:lemon_mcp, :call, :stop], h)
    assert %{server: "r", target: "r__x"} = stop
    {:ok, _} = LemonMCP.Host.list_tools(h)
    assert {:ok, _} = LemonMCP.Host.call_tool(h, "r__x", %{})
    {_, start} = receive_event([:lemon_mcp, :call, :start], h)
    assert %{server: "r", target: "r__x"} = start
    LemonMCP.Host.stop(h)
  end

  test "a host's calls are events, and its crashed server a restart event", _ do
    Application.put_env(:lemon_mcp, :telemetry_module, Handler)
    server = %{"command" => Fixture.path(), "restart" => %{"backoff_ms" => 20, "max_restarts" => 3}}
    {:ok, h} = LemonMCP.Host.start_link(%{"mcpServers" => %{"alpha" => server}})
    :ok = LemonMCP.Host.await_ready(h, 10_000)
    {:ok, _} = LemonMCP.Host.list_tools(h)

    assert {:ok, _} =
             LemonMCP.Host.request(h, "alpha", "tools/call", %{"name" => "echo", "arguments" => %{"text" => "x"}})

    {_, start} = receive_event([:lemon_mcp, :call, :start], h)
    assert %{server: "alpha", target: "echo"} = start
    {_, stop} = receive_event([:lemon_mcp, :call, :stop], h)
    assert %{server: "alpha", target: "echo", result: :ok} = stop
    assert {:error, :connection_closed} = LemonMCP.Host.call_tool(h, "alpha__crash", %{})
    # Both events name the tool by its own name and its server (:stop from
    # the core's record), as the C records and Python spans do.
    {_, start} = receive_event([:lemon_mcp, :call, :start], h)
    assert %{server: "alpha", target: "crash"} = start
    {_, stop} = receive_event([:lemon_mcp, :call, :stop], h)
    assert %{server: "alpha", target: "crash", result: :error, error_type: "closed"} = stop
    assert is_binary(stop.protocol_version) and is_integer(stop.request_id)
    {m, md} = receive_event([:lemon_mcp, :server, :restart], h)
    assert m.count == 1
    assert %{server: "alpha", attempt: 1} = md
    assert is_binary(md.reason)
    # The crash ended alpha's session: lost.
    {m, md} = receive_event([:lemon_mcp, :session, :stop], h)
    assert m.duration > 0
    assert %{server: "alpha", error_type: "closed"} = md
    assert is_binary(md.protocol_version)
    LemonMCP.Host.stop(h)
  end

  test "a closed client's session is a :session :stop event", %{c: c} do
    Application.put_env(:lemon_mcp, :telemetry_module, Handler)
    :ok = Client.close(c)
    {m, md} = receive_event([:lemon_mcp, :session, :stop], c)
    assert is_integer(m.duration) and m.duration > 0
    assert %{server: nil, error_type: nil} = md
    assert is_binary(md.protocol_version)
  end

  test "a session's :stop event carries the core record's duration, not one of Elixir's", %{c: c} do
    Application.put_env(:lemon_mcp, :telemetry_module, Handler)
    # A record as the core sends it: the event must be made of it, whatever
    # time Elixir saw pass since :ready.
    record = %{"kind" => "session", "duration_ns" => 1_234_567_891, "protocol_version" => "from-the-core"}
    send(c, {:lmcp_telemetry, :sys.get_state(c).tag, :session, Map.put(record, "error_type", "closed")})
    {m, md} = receive_event([:lemon_mcp, :session, :stop], c)
    assert m.duration == System.convert_time_unit(1_234_567_891, :nanosecond, :native)
    assert %{server: nil, protocol_version: "from-the-core", error_type: "closed"} = md
  end

  test "a stopped client's and host's sessions are :session :stop events", %{c: c} do
    # Configured after both started: each registers for its sessions'
    # records when it stops, and the core's free or close reports them.
    {:ok, h} = LemonMCP.Host.start_link(%{"mcpServers" => %{"alpha" => %{"command" => Fixture.path()}}})
    :ok = LemonMCP.Host.await_ready(h, 10_000)
    Application.put_env(:lemon_mcp, :telemetry_module, Handler)
    :ok = Client.stop(c)
    {m, md} = receive_event([:lemon_mcp, :session, :stop], c)
    assert is_integer(m.duration) and m.duration > 0
    assert %{server: nil, error_type: nil} = md
    assert is_binary(md.protocol_version)
    :ok = LemonMCP.Host.stop(h)
    {m, md} = receive_event([:lemon_mcp, :session, :stop], h)
    assert m.duration > 0
    assert %{server: "alpha", error_type: nil} = md
  end

  test "the trace option reaches a Python-SDK server's params._meta" do
    py = System.get_env("LEMONMCP_MODERN_PY")
    server = System.get_env("LEMONMCP_PYOTEL_SERVER")

    if is_nil(py) or is_nil(server) do
      flunk("set LEMONMCP_MODERN_PY and LEMONMCP_PYOTEL_SERVER (make test-elixir does, after make otel-setup)")
    end

    {:ok, c} = Client.start_link(command: py, args: [server])
    :ok = Client.await_ready(c, 30_000)
    tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    assert {:ok, r} = Client.call_tool_result(c, "whoami", %{}, trace: %{"traceparent" => tp, "baggage" => "k=v"})
    assert %{"traceparent" => ^tp, "baggage" => "k=v"} = r["structuredContent"]
    assert {:ok, spans} = Client.call_tool_result(c, "spans", %{})
    server_span = Enum.find(spans["structuredContent"]["result"], &(&1["name"] == "tools/call whoami"))
    assert server_span["trace_id"] == "4bf92f3577b34da6a3ce929d0e0e4736"
    assert server_span["parent_span_id"] == "00f067aa0ba902b7"
  end
end
