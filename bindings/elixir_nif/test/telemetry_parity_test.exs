defmodule LemonMCP.TelemetryParityTest do
  # The same operations, the same attributes, in every host (issue #21):
  # tests/fixtures/telemetry/parity.json lists operations on the Go fixture
  # and the MCP semantic-convention attributes each must be reported with;
  # the C records and the Python spans are checked against the same table
  # by bindings/python/tests/test_telemetry_parity.py. Global state (the
  # application's telemetry module): not async.
  use ExUnit.Case, async: false

  alias LemonMCP.{Client, Host}
  alias LemonMCP.Test.Fixture
  alias LemonMCP.Test.TelemetryForwarder, as: Handler

  @table Path.expand("../../../tests/fixtures/telemetry/parity.json", __DIR__)

  # A :stop event's metadata in the conventions' names.
  @target_attribute %{
    "tools/call" => "gen_ai.tool.name",
    "prompts/get" => "gen_ai.prompt.name",
    "resources/read" => "mcp.resource.uri"
  }

  defp attributes(md, keys) do
    attrs = %{"mcp.method.name" => md.method}

    attrs =
      if md.target && @target_attribute[md.method],
        do: Map.put(attrs, @target_attribute[md.method], md.target),
        else: attrs

    attrs = if md.error_type, do: Map.put(attrs, "error.type", md.error_type), else: attrs
    attrs = if md[:server], do: Map.put(attrs, "lemonmcp.server.name", md.server), else: attrs
    Map.take(attrs, keys)
  end

  # The table's "present" attributes a :stop event carries (any value).
  defp present(md) do
    for {attr, key} <- [{"mcp.protocol.version", :protocol_version}, {"jsonrpc.request.id", :request_id}],
        md[key] not in [nil, ""],
        do: attr
  end

  defp stop_event(from, what) do
    receive do
      {:event, [:lemon_mcp, :call, :stop], _, %{client: ^from} = md} -> md
    after
      10_000 -> flunk("no :stop event for #{what}")
    end
  end

  setup do
    Handler.listen()
    Application.put_env(:lemon_mcp, :telemetry_module, Handler)

    on_exit(fn ->
      Application.delete_env(:lemon_mcp, :telemetry_module)
      Handler.stop()
    end)

    :ok
  end

  test "calls are reported with the table's attributes" do
    {:ok, table} = LemonMCP.NIF.decode_json(File.read!(@table))
    c = Fixture.start!()

    for op <- table["operations"] do
      _ = Client.request(c, op["method"], op["params"])

      md = stop_event(c, op["method"])
      assert attributes(md, table["keys"]) == op["attributes"], "#{op["method"]} #{inspect(op["params"])}"
      assert present(md) == table["present"], "#{op["method"]}: #{inspect(md)}"
    end
  end

  test "a host's calls are reported with the table's attributes" do
    {:ok, table} = LemonMCP.NIF.decode_json(File.read!(@table))
    server = table["host"]["server"]
    {:ok, h} = Host.start_link(%{"mcpServers" => %{server => %{"command" => Fixture.path()}}})
    assert :ok = Host.await_ready(h, 15_000)

    for op <- table["host"]["operations"] do
      what = op["call_tool"] || op["method"]

      _ =
        if op["call_tool"],
          do: Host.call_tool(h, op["call_tool"], op["arguments"]),
          else: Host.request(h, server, op["method"], op["params"])

      md = stop_event(h, what)
      assert attributes(md, table["keys"]) == op["attributes"], what
      assert present(md) == table["present"], "#{what}: #{inspect(md)}"
    end

    Host.stop(h)
  end
end
