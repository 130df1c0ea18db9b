defmodule LemonMCP.ClientTest do
  # The seed suite's stdio items (ready state, server info and capabilities,
  # tools, echo, isError, resources, prompts, error shapes) against the
  # fixture server, plus what the seed lacked.
  use ExUnit.Case, async: true

  alias LemonMCP.Client
  alias LemonMCP.Test.Fixture

  setup do
    %{c: Fixture.start!()}
  end

  test "a new client is initializing, then ready", _ do
    {:ok, c} = Client.start_link(command: Fixture.path())
    assert Client.state(c) in [:initializing, :ready]
    assert :ok = Client.await_ready(c, 10_000)
    assert Client.state(c) == :ready
    assert :ok = Client.await_ready(c, 0)
  end

  test "server info and capabilities", %{c: c} do
    assert {:ok, %{name: "lemon-fixture", version: "1.0.0"}} = Client.server_info(c)
    assert {:ok, caps} = Client.server_capabilities(c)
    assert %{"tools" => _, "resources" => _, "prompts" => _} = caps
    assert {:ok, %{"protocolVersion" => v, "transport" => "stdio"}} = Client.initialize_result(c)
    assert is_binary(v)
  end

  test "tools: list, echo, the whole result, isError", %{c: c} do
    assert {:ok, tools} = Client.list_tools(c)
    names = Enum.map(tools, & &1["name"])
    assert "echo" in names and "fail" in names
    echo = Enum.find(tools, &(&1["name"] == "echo"))
    assert %{"inputSchema" => %{"type" => "object"}, "description" => _} = echo

    assert {:ok, [%{"type" => "text", "text" => "hello"}]} = Client.call_tool(c, "echo", %{text: "hello"})
    assert {:ok, [%{"text" => "3"}]} = Client.call_tool(c, "add", %{"a" => 1, "b" => 2})

    assert {:ok, %{"content" => [%{"text" => "hé 中"}], "structuredContent" => %{"text" => "hé 中"}}} =
             Client.call_tool_result(c, "echo", %{text: "hé 中"})

    assert {:error, {:tool_error, [%{"type" => "text", "text" => "it broke"}]}} =
             Client.call_tool(c, "fail", %{message: "it broke"})

    assert {:ok, %{"isError" => true}} = Client.call_tool_result(c, "fail", %{message: "x"})
  end

  test "large results arrive whole", %{c: c} do
    assert {:ok, [%{"text" => text}]} = Client.call_tool(c, "large", %{bytes: 1_000_000})
    assert byte_size(text) == 1_000_000
  end

  test "server errors are {:rpc_error, %{code, message, data}}", %{c: c} do
    assert {:error, {:rpc_error, %{code: -32602, message: msg, data: _}}} = Client.call_tool(c, "no-such-tool", %{})
    assert msg =~ "no-such-tool"
  end

  test "resources: list (every page), read, templates" do
    c = Fixture.start!(args: ["-page-size", "4"])
    assert {:ok, resources} = Client.list_resources(c)
    uris = Enum.map(resources, & &1["uri"])
    assert length(uris) == 26
    assert "fixture://item/25" in uris and "fixture://blob" in uris
    assert uris == Enum.uniq(uris)

    assert {:ok, [%{"uri" => "fixture://item/07", "text" => "item 07"}]} = Client.read_resource(c, "fixture://item/07")
    assert {:ok, [%{"blob" => blob}]} = Client.read_resource(c, "fixture://blob")
    assert is_binary(Base.decode64!(blob))
    assert {:ok, [%{"uriTemplate" => "fixture://items/{id}"}]} = Client.list_resource_templates(c)
    assert {:error, {:rpc_error, %{code: _}}} = Client.read_resource(c, "fixture://nothing-here")
  end

  test "prompts: list and get", %{c: c} do
    assert {:ok, prompts} = Client.list_prompts(c)
    assert Enum.map(prompts, & &1["name"]) |> Enum.sort() == ["greet", "plain"]

    assert {:ok, %{description: "Greets someone", messages: [msg]}} = Client.get_prompt(c, "greet", %{name: "Ada"})
    assert %{"role" => "user", "content" => %{"type" => "text", "text" => text}} = msg
    assert text =~ "Ada"
    assert {:ok, %{description: nil, messages: [_ | _]}} = Client.get_prompt(c, "plain")
  end

  test "ping, and completion the server did not declare", %{c: c} do
    # ping is a legacy-era request (the default, "auto", finds the dual-era
    # fixture modern), so it goes to a client pinned to that era.
    assert :ok = Client.ping(Fixture.start!(protocol_mode: "legacy"))

    assert {:error, {:unsupported, msg}} =
             Client.complete(c, %{ref: %{type: "ref/prompt", name: "greet"}, argument: %{name: "name", value: "A"}})

    assert msg =~ "completions"
  end

  test "arguments that are not JSON are refused, nothing is sent", %{c: c} do
    assert {:error, {:encode_failed, msg}} = Client.call_tool(c, "echo", %{text: {:a, :tuple}})
    assert msg =~ "tuple"
    assert {:error, {:encode_failed, _}} = Client.call_tool(c, "echo", %{text: <<0xFF, 0xFE>>})
    assert {:ok, _} = Client.call_tool(c, "echo", %{text: "still fine"})
  end

  test "a request past its deadline is {:error, :timeout}; the client goes on", %{c: c} do
    assert {:error, :timeout} = Client.call_tool(c, "slow", %{ms: 3_000}, 200)
    assert {:ok, [%{"text" => "ok"}]} = Client.call_tool(c, "echo", %{text: "ok"})
  end

  test "timeout_ms bounds every request" do
    c = Fixture.start!(timeout_ms: 150)
    assert {:error, :timeout} = Client.call_tool(c, "slow", %{ms: 3_000})
  end

  test "close: pending calls get :connection_closed, then :disconnected and {:not_ready, _}", %{c: c} do
    req = Client.async_request(c, "tools/call", %{name: "slow", arguments: %{ms: 10_000}})
    Process.sleep(100)
    assert :ok = Client.close(c)
    assert {:error, :connection_closed} = Client.await_response(req, 5_000)
    assert Client.state(c) == :disconnected
    assert {:error, {:not_ready, :disconnected}} = Client.list_tools(c)
    assert {:error, :not_connected} = Client.server_info(c)
    assert {:error, :not_connected} = Client.server_capabilities(c)
    assert :ok = Client.close(c)
  end

  test "the server exiting fails waiting calls at once and notifies subscribers", %{c: c} do
    :ok = Client.subscribe(c)
    req = Client.async_request(c, "tools/call", %{name: "slow", arguments: %{ms: 10_000}})
    Process.sleep(50)
    assert {:error, _} = Client.call_tool(c, "crash", %{code: 3})
    assert {:error, :connection_closed} = Client.await_response(req, 5_000)
    assert_receive {:lemon_mcp, ^c, :closed, %{"status" => -7, "requested" => false, "reason" => _}}, 5_000
    assert Client.state(c) == :disconnected
    assert {:error, :connection_closed} = Client.await_ready(c, 100)
  end

  test "notifications and progress reach a subscriber", %{c: c} do
    :ok = Client.subscribe(c, self())
    assert {:ok, _} = Client.call_tool(c, "notify", %{})
    assert_receive {:lemon_mcp, ^c, :notification, %{"method" => "notifications/tools/list_changed"}}, 5_000
    # tools/list_changed: the new tool is there on the next list.
    assert {:ok, tools} = Client.list_tools(c)
    assert Enum.any?(tools, &String.starts_with?(&1["name"], "dynamic_"))

    assert {:ok, _} =
             Client.request(c, "tools/call", %{name: "slow", arguments: %{ms: 200, steps: 3}},
               timeout: 5_000,
               progress: true
             )

    assert_receive {:lemon_mcp, ^c, :progress, %{"call_id" => _, "progress" => _}}, 5_000

    :ok = Client.unsubscribe(c, self())
    assert {:ok, _} = Client.call_tool(c, "notify", %{})
    refute_receive {:lemon_mcp, ^c, :notification, _}, 300
  end

  test "a subscriber given at start sees the ready event" do
    {:ok, c} = Client.start_link(command: Fixture.path(), subscriber: self())
    assert_receive {:lemon_mcp, ^c, :ready, %{"server" => %{"serverInfo" => %{"name" => "lemon-fixture"}}}}, 10_000
  end

  test "an initialize error fails the handshake instead of hanging" do
    {:ok, c} = Client.start_link(command: Fixture.path(), args: ["-init-error"])
    assert {:error, {:rpc_error, %{code: _, message: _}}} = Client.await_ready(c, 10_000)
    assert Client.state(c) == :failed
    assert {:error, {:not_ready, :failed}} = Client.list_tools(c)
  end

  test "await_ready times out while the server stays silent" do
    {:ok, c} = Client.start_link(command: Fixture.path(), args: ["-no-init"])
    assert {:error, :timeout} = Client.await_ready(c, 200)
    assert Client.state(c) == :initializing
    assert {:error, {:not_ready, :initializing}} = Client.call_tool(c, "echo", %{text: "x"})
  end

  test "the initialize request carries clientInfo; non-JSON banner lines are tolerated" do
    log = Fixture.tmp_path("stdin")
    # the initialize request: the legacy era, pinned
    c =
      Fixture.start!(
        protocol_mode: "legacy",
        args: ["-banner", "3", "-log-file", log],
        client_name: "my-host",
        client_version: "9.9"
      )

    assert {:ok, _} = Client.call_tool(c, "echo", %{text: "x"})
    [init | _] = File.read!(log) |> String.split("\n", trim: true)
    assert {:ok, %{"method" => "initialize", "params" => params}} = LemonMCP.NIF.decode_json(init)
    assert %{"clientInfo" => %{"name" => "my-host", "version" => "9.9"}, "protocolVersion" => _} = params
    # No handler was given: no sampling, roots or elicitation capability.
    assert params["capabilities"] == %{}
    File.rm(log)
  end

  test "a registered name works like the pid" do
    name = :"lemon_client_#{System.unique_integer([:positive])}"
    {:ok, pid} = Client.start_link(command: Fixture.path(), name: name)
    assert Process.whereis(name) == pid
    assert :ok = Client.await_ready(name, 10_000)
    assert {:ok, [_ | _]} = Client.list_tools(name)
  end

  test "a supervisor can own clients" do
    spec = {Client, command: Fixture.path(), name: :"sup_client_#{System.unique_integer([:positive])}"}
    {:ok, sup} = Supervisor.start_link([spec], strategy: :one_for_one)
    [{_, pid, :worker, _}] = Supervisor.which_children(sup)
    assert :ok = Client.await_ready(pid, 10_000)
    os_pid = Fixture.os_pid(pid)
    :ok = Supervisor.stop(sup)
    assert Fixture.eventually(fn -> not Fixture.alive?(os_pid) end)
  end

  test "roots and elicitation handlers answer from their own processes" do
    me = self()

    c =
      Fixture.start!(
        roots: [%{"uri" => "file:///tmp/project", "name" => "project"}],
        elicitation_handler: fn params ->
          send(me, {:elicited, self(), params})
          {:ok, %{"action" => "accept", "content" => %{"name" => "Ada", "age" => 36}}}
        end
      )

    assert {:ok, [%{"text" => roots}]} = Client.call_tool(c, "roots", %{})

    assert {:ok, %{"roots" => [%{"uri" => "file:///tmp/project", "name" => "project"}]}} =
             LemonMCP.NIF.decode_json(roots)

    assert {:ok, [%{"text" => answer}]} = Client.call_tool(c, "elicit", %{message: "who are you?"})
    assert {:ok, %{"action" => "accept", "content" => %{"name" => "Ada"}}} = LemonMCP.NIF.decode_json(answer)
    assert_received {:elicited, pid, %{"message" => "who are you?"}}
    assert pid != c
  end
end
