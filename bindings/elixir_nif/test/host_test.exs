defmodule LemonMCP.HostTest do
  # LemonMCP.Host against fixture servers: both protocol eras, a server that
  # never starts, prefixed tool names, a crash and its restart, a server
  # request answered with the server's name.
  use ExUnit.Case, async: true

  alias LemonMCP.Host
  alias LemonMCP.Test.Fixture

  defp config do
    %{
      "defaults" => %{"timeouts" => %{"ready_ms" => 5000, "close_grace_ms" => 300}},
      "mcpServers" => %{
        # alpha pins the legacy era (both eras in one host; a server
        # request over its session is answered with its name)
        "alpha" => %{
          "command" => Fixture.path(),
          "protocol" => %{"mode" => "legacy"},
          "restart" => %{"backoff_ms" => 20, "max_restarts" => 3}
        },
        "beta" => %{"command" => Fixture.path(), "protocol" => %{"mode" => "modern"}},
        "broken" => %{"command" => "/nonexistent/lmcp-ex-server", "restart" => %{"backoff_ms" => 5000}}
      }
    }
  end

  defp eventually(fun, tries \\ 250) do
    cond do
      fun.() -> true
      tries == 0 -> false
      true -> Process.sleep(20) && eventually(fun, tries - 1)
    end
  end

  test "the host lifecycle" do
    {:ok, h} = Host.start_link(config(), subscriber: self())
    assert :ok = Host.await_ready(h, 15_000)

    {:ok, servers} = Host.servers(h)
    assert %{"state" => "ready", "era" => "legacy", "restarts" => 0} = servers["alpha"]
    assert %{"state" => "ready", "era" => "modern"} = servers["beta"]
    assert %{"state" => "failed", "last_error" => err} = servers["broken"]
    assert err =~ "lmcp-ex-server"

    {:ok, tools} = Host.list_tools(h)
    names = Enum.map(tools, & &1["name"])
    assert "alpha__echo" in names and "beta__echo" in names
    assert %{"server" => "beta", "original_name" => "echo"} = Enum.find(tools, &(&1["name"] == "beta__echo"))

    assert {:ok, [%{"text" => "hi"}]} = Host.call_tool(h, "beta__echo", %{text: "hi"})

    assert {:ok, %{"content" => [%{"text" => "5"}]}} =
             Host.request(h, "alpha", "tools/call", %{name: "add", arguments: %{a: 2, b: 3}})

    assert {:error, {:not_found, _}} = Host.call_tool(h, "gamma__echo", %{})
    {:ok, prompts} = Host.list_prompts(h)
    assert Enum.any?(prompts, &(&1["server"] == "alpha"))
    {:ok, resources} = Host.list_resources(h)
    assert Enum.any?(resources, &(&1["server"] == "beta"))

    # A crash: the call fails once, the server is restarted.
    assert {:error, :connection_closed} = Host.call_tool(h, "alpha__crash", %{})
    assert_receive {:lemon_mcp_host, ^h, :restarting, %{"server" => "alpha", "attempt" => 1}}, 10_000

    assert eventually(fn ->
             {:ok, s} = Host.servers(h)
             s["alpha"]["state"] == "ready" and s["alpha"]["restarts"] == 1
           end)

    assert {:ok, [%{"text" => "back"}]} = Host.call_tool(h, "alpha__echo", %{text: "back"})
    assert :ok = Host.close(h)
    assert :ok = Host.stop(h)
  end

  test "server requests reach the handler with the server's name" do
    cfg = %{
      "defaults" => %{"handlers" => %{"elicitation" => %{}}},
      "mcpServers" => %{"a" => %{"command" => Fixture.path()}, "b" => %{"command" => Fixture.path()}}
    }

    me = self()

    handler = fn kind, payload ->
      send(me, {:asked, kind, payload["server"]})
      {:ok, %{"action" => "accept", "content" => %{"name" => payload["server"]}}}
    end

    {:ok, h} = Host.start_link(cfg, request_handler: handler)
    assert :ok = Host.await_ready(h, 15_000)
    assert {:ok, [%{"text" => text}]} = Host.call_tool(h, "b__elicit", %{message: "who?"})
    assert text =~ "\"b\""
    assert_received {:asked, :elicitation, "b"}
    Host.stop(h)
  end

  test "tool_prefix on_collision, a JSON file, tools.allow" do
    path = Path.join(System.tmp_dir!(), "lmcp-host-#{System.unique_integer([:positive])}.json")

    File.write!(path, """
    {"mcpServers": {"a": {"command": "#{Fixture.path()}"},
                    "b": {"command": "#{Fixture.path()}", "tools": {"allow": ["echo"]}}}}
    """)

    {:ok, h} = Host.start_link(path, tool_prefix: "on_collision")
    File.rm!(path)
    assert :ok = Host.await_ready(h, 15_000)
    {:ok, tools} = Host.list_tools(h)
    names = Enum.map(tools, & &1["name"])
    assert "a__echo" in names and "b__echo" in names and "add" in names
    assert {:ok, [%{"text" => "3"}]} = Host.call_tool(h, "add", %{a: 1, b: 2})
    assert {:error, {:policy_denied, _}} = Host.call_tool(h, "b__add", %{a: 1, b: 2})
    Host.stop(h)
  end

  test "a bad configuration fails the start with the field's name" do
    Process.flag(:trap_exit, true)
    cfg = %{"mcpServers" => %{"a" => %{"command" => "x", "env" => %{"K" => "${LMCP_SURELY_UNSET_VAR}"}}}}
    assert {:error, {:invalid_argument, msg}} = Host.start_link(cfg)
    assert msg =~ "config.mcpServers.a.env.K"
  end

  test "the host's servers go when its process exits" do
    {:ok, h} = Host.start_link(%{"mcpServers" => %{"a" => %{"command" => Fixture.path()}}})
    assert :ok = Host.await_ready(h, 15_000)
    {:ok, [%{"text" => pid}]} = Host.call_tool(h, "a__pid", %{})
    Host.stop(h)
    os_pid = String.to_integer(pid)

    assert eventually(fn -> not File.exists?("/proc/#{os_pid}") end),
           "the server process #{os_pid} outlived its host"
  end

  test "a slow list holds no scheduler and no host call waits for it" do
    # The server answers lists after two minutes: more lists and searches
    # are in flight than there are dirty I/O schedulers, as messages, while
    # calls and a dirty NIF (await_ready) go on.
    cfg = %{
      "mcpServers" => %{
        "a" => %{"command" => Fixture.path()},
        "slow" => %{"command" => Fixture.path(), "args" => ["-list-delay-ms", "120000"]}
      }
    }

    {:ok, h} = Host.start_link(cfg)
    assert :ok = Host.await_ready(h, 15_000)
    n = :erlang.system_info(:dirty_io_schedulers) + 2

    pending =
      [Task.async(fn -> Host.search_tools(h, "adds two numbers") end)] ++
        for(_ <- 1..n, do: Task.async(fn -> Host.list_tools(h) end))

    assert :ok = Host.await_ready(h, 15_000)
    for _ <- 1..5, do: assert({:ok, [%{"text" => "meanwhile"}]} = Host.call_tool(h, "a__echo", %{text: "meanwhile"}))
    assert Enum.all?(pending, &(Task.yield(&1, 0) == nil)), "a list answered before the slow server did"
    Enum.each(pending, &Task.shutdown(&1, :brutal_kill))
    assert {:error, {:not_found, _}} = Host.search_tools(h, "add", servers: ["zz"])
    Host.stop(h)
  end

  # One list of call options (LemonMCP.CallOptions) for a client's and a
  # host's calls: each given at once; progress and verify show theirs.
  test "a host call takes every call option a client call takes" do
    {:ok, h} = Host.start_link(%{"mcpServers" => %{"a" => %{"command" => Fixture.path()}}}, subscriber: self())
    assert :ok = Host.await_ready(h, 15_000)

    every = [
      timeout: 30_000,
      reset_timeout_on_progress: true,
      max_total_ms: 60_000,
      all_pages: false,
      progress: true,
      wait_ready: true,
      meta: %{"example.com/k" => "v"},
      no_cache: true,
      task: false,
      trace: %{"traceparent" => "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
      fail_if_restarting: true
    ]

    assert {:ok, _} = Host.call_tool(h, "a__slow", %{"ms" => 60, "steps" => 3}, every)

    for _ <- 1..3 do
      assert_receive {:lemon_mcp_host, ^h, :progress, %{"server" => "a"}}, 10_000
    end

    read = %{"uri" => "fixture://item/01"}

    assert {:ok, %{"contents" => [%{"text" => "item 01"}]}} =
             Host.request(h, "a", "resources/read", read, verify: %{"size" => 7})

    assert {:error, {:protocol_error, _}} = Host.request(h, "a", "resources/read", read, verify: %{"size" => 8})
    Host.stop(h)
  end
end
