defmodule LemonMCP.HostSearchTest do
  # Tool search and deferred exposure through LemonMCP.Host (issue 22),
  # against two fixture servers.
  use ExUnit.Case, async: true

  alias LemonMCP.Host
  alias LemonMCP.Test.Fixture

  defp config(extra) do
    Map.merge(
      %{
        "defaults" => %{"timeouts" => %{"ready_ms" => 5000, "close_grace_ms" => 300}},
        "mcpServers" => %{
          "alpha" => %{"command" => Fixture.path()},
          "beta" => %{"command" => Fixture.path(), "tools" => %{"deny" => ["pid"]}}
        }
      },
      extra
    )
  end

  defp start(extra \\ %{}) do
    {:ok, h} = Host.start_link(config(extra))
    assert :ok = Host.await_ready(h, 15_000)

    on_exit(fn ->
      # Linked to the test process, which has ended by now: the host may be
      # stopping with it already (then stop exits with its :shutdown).
      try do
        if Process.alive?(h), do: Host.stop(h)
      catch
        :exit, _ -> :ok
      end
    end)

    h
  end

  test "search_tools ranks the catalogue" do
    h = start()

    assert {:ok, [%{"name" => "alpha__pid", "server" => "alpha", "score" => score, "tool" => tool}]} =
             Host.search_tools(h, "process id", limit: 1)

    assert score > 0
    assert %{"original_name" => "pid", "inputSchema" => %{}} = tool

    assert {:ok, [%{"name" => "alpha__add"}, %{"name" => "beta__add"}]} = Host.search_tools(h, "adds", limit: 2)
    assert {:ok, [%{"name" => "beta__add"} | _]} = Host.search_tools(h, "adds", servers: ["beta"])
    assert {:ok, [%{"text" => "5"}]} = Host.call_tool(h, "beta__add", %{a: 2, b: 3})
    assert {:ok, []} = Host.search_tools(h, "kubernetes deployment")
    assert Host.search_tools(h, "returns text") == Host.search_tools(h, "text returns")
  end

  test "search_tools refuses bad input with a clear reason" do
    h = start()

    for {query, opts, kind, words} <- [
          {"", [], :invalid_argument, "query is empty"},
          {"the of", [], :invalid_argument, "no word to search for"},
          {"add", [limit: 0], :invalid_argument, "options.limit"},
          {"add", [limit: "3"], :invalid_argument, ":limit must be an integer"},
          {"add", [servers: "alpha"], :invalid_argument, ":servers must be a list"},
          {"add", [servers: ["gamma"]], :not_found, "gamma"}
        ] do
      assert {:error, {^kind, message}} = Host.search_tools(h, query, opts)
      assert message =~ words
    end
  end

  test "deferred_tools: list_tools offers search_tools, answered by the host" do
    h = start(%{"deferred_tools" => %{"always_loaded" => ["alpha__echo"], "max_results" => 3}})
    {:ok, tools} = Host.list_tools(h)
    assert Enum.map(tools, & &1["name"]) == ["alpha__echo", "search_tools"]

    assert {:ok, %{"structuredContent" => %{"tools" => [%{"name" => "alpha__pid"}]}}} =
             Host.call_tool_result(h, "search_tools", %{query: "process id", limit: 1})

    assert {:error, {:tool_error, [%{"text" => text}]}} = Host.call_tool(h, "search_tools", %{})
    assert text =~ "query"
    assert {:ok, [%{"text" => pid}]} = Host.call_tool(h, "alpha__pid", %{})
    assert pid =~ ~r/^\d+$/
  end
end
