defmodule LemonMCP.HostPinsTest do
  # Pinned definitions through LemonMCP.Host (issue 27): the attacker cases
  # of tests/fixtures/rugpull/cases.json (the table every binding runs)
  # against the rugpull fixture, which changes what it offers on SIGUSR1.
  use ExUnit.Case, async: true

  alias LemonMCP.{Host, NIF}
  alias LemonMCP.Test.Fixture

  @cases_path Path.expand("../../../tests/fixtures/rugpull/cases.json", __DIR__)

  defp cases do
    {:ok, table} = NIF.decode_json(File.read!(@cases_path))
    table
  end

  defp rugpull, do: Path.join(Path.dirname(Fixture.path()), "rugpull")

  defp rig(tmp) do
    %{defs: Path.join(tmp, "defs.json"), pid: Path.join(tmp, "pid"), pins: Path.join(tmp, "pins.json")}
  end

  defp write_defs(rig, defs) do
    {:ok, json} = NIF.encode_json(defs)
    File.write!(rig.defs <> ".tmp", json)
    File.rename!(rig.defs <> ".tmp", rig.defs)
  end

  defp start(rig, opts \\ []) do
    config = %{
      "mcpServers" => %{
        "r" => %{
          "command" => rugpull(),
          "args" => ["-defs", rig.defs],
          "env" => %{"RUGPULL_PIDFILE" => rig.pid},
          "timeouts" => %{"ready_ms" => 5000, "close_grace_ms" => 300}
        }
      }
    }

    store = if opts[:store], do: %{"type" => "app"}, else: %{"type" => "file", "path" => rig.pins}

    config = Map.put(config, "pins", %{"store" => store})
    {:ok, h} = Host.start_link(config, opts)
    assert :ok = Host.await_ready(h, 15_000)
    h
  end

  defp stop(h), do: if(Process.alive?(h), do: Host.stop(h))

  defp signal(rig) do
    {_, 0} = System.cmd("kill", ["-USR1", String.trim(File.read!(rig.pid))])
  end

  defp entry(pins, "instructions", _name), do: pins["instructions"]
  defp entry(pins, kind, name), do: pins[kind <> "s"][name]

  defp wait_status(h, kind, name, status, tries \\ 500) do
    {:ok, %{"r" => pins}} = Host.pins(h)
    e = entry(pins, kind, name)

    cond do
      e != nil and e["status"] == status -> e
      tries == 0 -> flunk("#{kind} #{name}: #{inspect(e)}, not #{status}")
      true -> Process.sleep(20) && wait_status(h, kind, name, status, tries - 1)
    end
  end

  # A tool changed while no host ran is held from the first use of each of
  # 100 fresh hosts: a call right after the start, or a list. The defect
  # this guards against (the call went out before the server's pin verdict)
  # showed in most starts, never in all.
  test "a held tool is refused from the first use of a fresh host" do
    tmp = Path.join(System.tmp_dir!(), "lmcp-pins-#{System.unique_integer([:positive])}")
    on_exit(fn -> File.rm_rf!(tmp) end)
    File.mkdir_p!(tmp)
    table = cases()
    rig = rig(tmp)
    write_defs(rig, table["base"])
    h = start(rig)
    assert {:ok, [%{"text" => "called echo"}]} = Host.call_tool(h, "r__echo", %{})
    stop(h)
    write_defs(rig, Enum.find(table["cases"], &(&1["name"] == "description"))["defs"])
    held = %{"server" => "r", "kind" => "tool", "name" => "echo", "status" => "changed"}

    failures =
      1..100
      |> Task.async_stream(
        fn i ->
          h = start(rig)

          try do
            if rem(i, 2) == 0 do
              case Host.call_tool(h, "r__echo", %{}) do
                {:error, {:policy_denied, %{"held" => ^held, "message" => why}}} ->
                  if why =~ "LemonMCP.Host.approve(host, \"r\", \"echo\"" and not (why =~ "lmcp_"),
                    do: nil,
                    else: why

                other ->
                  inspect(other)
              end
            else
              {:ok, listed} = Host.list_tools(h)
              names = Enum.map(listed, & &1["name"])
              if "r__add" in names and "r__echo" not in names, do: nil, else: inspect(names)
            end
          after
            stop(h)
          end
        end,
        max_concurrency: 8,
        timeout: 60_000
      )
      |> Enum.flat_map(fn {:ok, f} -> if f, do: [f], else: [] end)

    assert failures == []
  end

  test "every attacker case is held until the hash shown is approved" do
    tmp = Path.join(System.tmp_dir!(), "lmcp-pins-#{System.unique_integer([:positive])}")
    on_exit(fn -> File.rm_rf!(tmp) end)
    table = cases()

    for c <- table["cases"] do
      dir = Path.join(tmp, c["name"])
      File.mkdir_p!(dir)
      rig = rig(dir)
      write_defs(rig, table["base"])
      h = start(rig)
      {:ok, %{"r" => first}} = Host.pins(h)
      assert Enum.all?(Map.values(first["tools"]), &(&1["status"] == "approved")), c["name"]
      assert {:ok, [%{"text" => "called echo"}]} = Host.call_tool(h, "r__echo", %{})
      write_defs(rig, c["defs"])

      h =
        if c["name"] == "instructions" do
          stop(h)
          start(rig)
        else
          signal(rig)
          h
        end

      for e <- c["expect"] do
        got = wait_status(h, e["kind"], e["name"], e["status"])
        assert got["held"] == (e["status"] != "removed") or (got["held"] == nil and e["status"] == "removed")
      end

      {:ok, listed} = Host.list_tools(h)
      names = Enum.map(listed, & &1["name"])

      for t <- c["held_tools"] do
        refute ("r__" <> t) in names
        assert {:error, {:policy_denied, %{"message" => why, "held" => %{"server" => "r"}}}} =
                 Host.call_tool(h, "r__" <> t, %{})

        assert why =~ "is held"
      end

      for t <- c["callable_tools"] do
        assert {:ok, [%{"text" => "called " <> ^t}]} = Host.call_tool(h, "r__" <> t, %{})
      end

      {:ok, %{"r" => pins}} = Host.pins(h)

      for e <- c["expect"], e["status"] != "removed" do
        got = entry(pins, e["kind"], e["name"])
        stale = got["pinned_hash"] || "sha256:" <> String.duplicate("0", 64)
        assert {:error, {:invalid_state, msg}} = Host.approve(h, "r", e["name"], stale, e["kind"])
        assert msg =~ "no longer offers"
        assert :ok = Host.approve(h, "r", e["name"], got["hash"], e["kind"])
      end

      for t <- c["held_tools"] ++ c["callable_tools"] do
        assert {:ok, [%{"text" => "called " <> ^t}]} = Host.call_tool(h, "r__" <> t, %{})
      end

      stop(h)
    end
  end

  # The application's pin store: the document in an Agent, as an
  # application would keep it in its own database.
  # The application's store: documents and their versions in an agent,
  # saved by compare-and-save, as a database would keep them.
  defp app_store do
    {:ok, agent} = Agent.start_link(fn -> %{docs: %{}, loads: 0, saves: 0} end)

    load = fn c, k ->
      Agent.get_and_update(agent, &{{:ok, Map.get(&1.docs, {c, k})}, %{&1 | loads: &1.loads + 1}})
    end

    save = fn c, k, expected, doc ->
      Agent.get_and_update(agent, fn st ->
        case Map.get(st.docs, {c, k}) do
          {won, v} when v != expected -> {{:conflict, won, v}, st}
          nil when expected != 0 -> {{:conflict, nil, 0}, st}
          _ -> {{:ok, expected + 1}, %{st | docs: Map.put(st.docs, {c, k}, {doc, expected + 1}), saves: st.saves + 1}}
        end
      end)
    end

    {agent, {load, save}}
  end

  # A directory of its own, removed when the test ends.
  defp tmp_dir do
    tmp = Path.join(System.tmp_dir!(), "lmcp-pins-#{System.unique_integer([:positive])}")
    File.mkdir_p!(tmp)
    on_exit(fn -> File.rm_rf!(tmp) end)
    tmp
  end

  test "pins persist through the application's :store across host runs" do
    rig = rig(tmp_dir())
    write_defs(rig, cases()["base"])
    {agent, store} = app_store()

    h = start(rig, store: store)
    assert {:ok, %{"r" => pins}} = Host.pins(h)
    assert Enum.all?(Map.values(pins["tools"]), &(&1["status"] == "approved"))
    stop(h)
    assert %{docs: docs, saves: saves} = Agent.get(agent, & &1)
    assert saves >= 1
    assert Enum.all?(Map.keys(docs), fn {c, _k} -> c == "pins" end)
    refute File.exists?(rig.pins)

    # The second run reads what the first saved: a changed definition is held.
    changed = Enum.find(cases()["cases"], &(&1["name"] == "description"))
    write_defs(rig, changed["defs"])
    loads = Agent.get(agent, & &1.loads)
    h = start(rig, store: store)
    assert Agent.get(agent, & &1.loads) > loads
    e = wait_status(h, "tool", "echo", "changed")
    assert {:error, {:policy_denied, _}} = Host.call_tool(h, "r__echo", %{})
    assert :ok = Host.approve(h, "r", "echo", e["hash"])
    {:ok, saved} = NIF.encode_json(Agent.get(agent, &Enum.map(&1.docs, fn {_k, {doc, _v}} -> doc end)))
    assert saved =~ e["hash"]
    assert {:ok, [%{"text" => "called echo"}]} = Host.call_tool(h, "r__echo", %{})
    stop(h)
  end

  test "a failing :store holds everything and names the request" do
    rig = rig(tmp_dir())
    write_defs(rig, cases()["base"])
    h = start(rig, store: {fn _c, _k -> {:error, "the database is down"} end, fn _c, _k, _e, _d -> {:ok, 1} end})
    assert {:ok, %{"r" => pins}} = Host.pins(h)
    assert pins["error"] =~ "the application refused store_load"
    refute pins["error"] =~ "the database is down"
    assert {:error, {:policy_denied, _}} = Host.call_tool(h, "r__echo", %{})
    stop(h)
  end

  test "a bad :store, the retired :pin_store and a retired pins.store are errors naming them" do
    servers = %{"mcpServers" => %{}}
    assert {:error, {:invalid_argument, msg}} = Host.start_link(servers, store: fn -> nil end)
    assert msg =~ ":store: expected {load, save}"
    assert {:error, {:invalid_argument, msg}} = Host.start_link(servers, pin_store: {fn -> nil end, fn _ -> :ok end})
    assert msg =~ ":pin_store is retired"

    for {old, want} <- [{"/tmp/pins.json", "a path is retired"}, {"app", ~s("app" is retired)}] do
      Process.flag(:trap_exit, true)
      assert {:error, {:invalid_argument, msg}} = Host.start_link(Map.put(servers, "pins", %{"store" => old}))
      assert msg =~ want
    end
  end

  test "pins and approve without \"pins\" say so" do
    {:ok, h} = Host.start_link(%{"mcpServers" => %{"a" => %{"command" => Fixture.path(), "enabled" => false}}})
    assert {:error, {:invalid_state, msg}} = Host.pins(h)
    assert msg =~ ~s(no "pins")
    assert {:error, {:invalid_state, _}} = Host.approve(h, "a", "x", "sha256:0")
    Host.stop(h)
  end
end
