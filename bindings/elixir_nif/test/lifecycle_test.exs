defmodule LemonMCP.LifecycleTest do
  # Who owns what: close reaps the server; the death of the owning process,
  # or the garbage collection of the client resource, frees the client and
  # reaps the server; loading the application starts nothing (seed items
  # 37 and 38).
  #
  # Not async: it counts the library's live clients and the VM's processes.
  use ExUnit.Case, async: false

  alias LemonMCP.{Client, NIF}
  alias LemonMCP.Test.Fixture

  defp config(args \\ []) do
    %{"transport" => %{"type" => "stdio", "command" => Fixture.path(), "args" => args}}
  end

  # A raw NIF client, ready, owned by the calling process: {res, os_pid}.
  defp raw_client! do
    {:ok, res} = NIF.client_new(config())
    tag = make_ref()
    :ok = NIF.set_handlers(res, tag)
    :ok = NIF.connect(res)
    assert_receive {:lmcp_event, ^tag, :ready, _}, 10_000
    {:ok, id} = NIF.call(res, "tools/call", %{"name" => "pid", "arguments" => %{}}, nil)
    assert_receive {:lmcp_done, ^id, 0, %{"content" => [%{"text" => text}]}}, 5_000
    {res, String.to_integer(text)}
  end

  # A client whose resource is dropped on return: only the server's pid
  # comes back (a separate function, so no stack slot keeps the resource).
  @compile {:no_inline, dropped_client: 0}
  defp dropped_client, do: raw_client!() |> elem(1)

  defp live_clients, do: LemonMCP.diagnostics()["live_clients"]

  test "close/1 stops and reaps the server, grandchildren included" do
    pidfile = Fixture.tmp_path("grandchild")
    c = Fixture.start!(args: ["-grandchild", "-pidfile", pidfile])
    os_pid = Fixture.os_pid(c)
    assert Fixture.eventually(fn -> File.exists?(pidfile) and File.read!(pidfile) != "" end)
    grandchild = pidfile |> File.read!() |> String.trim() |> String.to_integer()
    assert Fixture.alive?(os_pid) and Fixture.alive?(grandchild)

    assert :ok = Client.close(c)
    refute Fixture.alive?(os_pid), "the server is reaped when close/1 returns"
    assert Fixture.eventually(fn -> not Fixture.alive?(grandchild) end)
    assert Process.alive?(c)
    File.rm(pidfile)
  end

  test "close/1 escalates to SIGKILL for a server that ignores stdin EOF and SIGTERM" do
    c = Fixture.start!(args: ["-ignore-stdin-eof", "-ignore-sigterm"], close_grace_ms: 200)
    os_pid = Fixture.os_pid(c)
    assert :ok = Client.close(c)
    assert Fixture.eventually(fn -> not Fixture.alive?(os_pid) end, 3_000)
  end

  test "the death of the client process frees the client and reaps the server" do
    parent = self()

    spawn(fn ->
      c = Fixture.start!()
      send(parent, {:client, c, Fixture.os_pid(c)})
      Process.sleep(:infinity)
    end)

    assert_receive {:client, c, os_pid}, 10_000
    before = live_clients()
    Process.exit(c, :kill)
    assert Fixture.eventually(fn -> not Fixture.alive?(os_pid) end)
    assert Fixture.eventually(fn -> live_clients() < before end)
  end

  test "the owner's monitor frees the client even while another process holds the resource" do
    parent = self()

    owner =
      spawn(fn ->
        {res, os_pid} = raw_client!()
        send(parent, {:client, res, os_pid})

        receive do
          :die -> exit(:boom)
        end
      end)

    assert_receive {:client, res, os_pid}, 10_000
    assert NIF.state(res) == 2
    send(owner, :die)
    assert Fixture.eventually(fn -> not Fixture.alive?(os_pid) end)
    # This process still holds the resource; the handle is freed.
    assert {:error, -2, %{"message" => msg}} = NIF.state(res)
    assert msg =~ "freed"
    assert {:error, -2, _} = NIF.call(res, "ping", nil, nil)
    assert :ok = NIF.close(res, 100)
  end

  test "a garbage-collected client is freed and its server reaped" do
    parent = self()

    holder =
      spawn(fn ->
        os_pid = dropped_client()
        # The resource is no longer referenced; collect it.
        :erlang.garbage_collect()
        send(parent, {:os_pid, os_pid})

        receive do
          :stop -> :ok
        end
      end)

    assert_receive {:os_pid, os_pid}, 10_000
    assert Fixture.eventually(fn -> not Fixture.alive?(os_pid) end)
    assert Process.alive?(holder), "the owner is alive: the destructor did it, not the monitor"
    send(holder, :stop)
  end

  test "free/1 is immediate, idempotent, and later calls fail cleanly" do
    {res, os_pid} = raw_client!()
    assert :ok = NIF.free(res)
    assert :ok = NIF.free(res)
    assert Fixture.eventually(fn -> not Fixture.alive?(os_pid) end)
    assert {:error, -2, _} = NIF.state(res)
  end

  test "pending calls complete (cancelled) when the client is freed" do
    {res, _} = raw_client!()
    {:ok, id} = NIF.call(res, "tools/call", %{"name" => "slow", "arguments" => %{"ms" => 10_000}}, nil)
    :ok = NIF.free(res)
    assert_receive {:lmcp_done, ^id, -6, %{"status" => -6}}, 5_000
  end

  test "free/1 returns after the completions; no event arrives after it (issue 10 item 6)" do
    for _ <- 1..5 do
      {:ok, res} = NIF.client_new(config())
      tag = make_ref()
      :ok = NIF.set_handlers(res, tag)
      :ok = NIF.connect(res)
      assert_receive {:lmcp_event, ^tag, :ready, _}, 10_000
      slow = %{"name" => "slow", "arguments" => %{"ms" => 10_000, "steps" => 2_000}}

      ids =
        for _ <- 1..3 do
          {:ok, id} = NIF.call(res, "tools/call", slow, %{"progress" => true})
          id
        end

      assert_receive {:lmcp_event, ^tag, :progress, _}, 5_000
      :ok = NIF.free(res)
      # The library delivered the cancelled completions before free returned.
      for id <- ids, do: assert_received({:lmcp_done, ^id, -6, _})
      flush_events(tag)
      refute_receive {:lmcp_event, ^tag, _, _}, 100
    end
  end

  defp flush_events(tag) do
    receive do
      {:lmcp_event, ^tag, _, _} -> flush_events(tag)
    after
      0 -> :ok
    end
  end

  test "creating and freeing many clients leaks no client" do
    # A client of an earlier test may still be on its way out (its resource
    # is freed when the last process holding it is collected): collect now,
    # and allow the count to end below the start, never above it.
    Enum.each(Process.list(), &:erlang.garbage_collect/1)
    before = live_clients()

    for _ <- 1..20 do
      c = Fixture.start!()
      :ok = Client.stop(c)
    end

    assert Fixture.eventually(fn -> live_clients() <= before end)
  end

  @tag capture_log: true
  test "loading the application starts no process, and features/0 answers" do
    ours = fn ->
      for p <- Process.list(),
          info = Process.info(p, [:dictionary, :initial_call, :registered_name]),
          info != nil,
          mods = [
            elem(info[:initial_call], 0),
            elem(Keyword.get(info[:dictionary], :"$initial_call", {nil, nil, 0}), 0)
          ],
          Enum.any?(mods, &(is_atom(&1) and String.starts_with?(Atom.to_string(&1), "Elixir.LemonMCP"))),
          do: p
    end

    Fixture.eventually(fn -> ours.() == [] end)
    assert ours.() == []
    _ = Application.stop(:lemon_mcp)
    :ok = Application.unload(:lemon_mcp)
    before = Process.list()

    assert :ok = Application.load(:lemon_mcp)
    assert Application.spec(:lemon_mcp, :mod) == []
    refute Code.ensure_loaded?(LemonMCP.Application)
    assert Code.ensure_loaded?(LemonMCP.Client)
    features = LemonMCP.features()
    assert %{"version" => v, "abi_version" => 1, "transports" => ["stdio" | _]} = features
    assert v == LemonMCP.version()
    assert ours.() == []

    assert {:ok, _} = Application.ensure_all_started(:lemon_mcp)
    assert Process.list() -- before == [] or Enum.all?(Process.list() -- before, &(&1 not in ours.()))
    assert ours.() == []
    assert Enum.filter(Process.registered(), &String.starts_with?(Atom.to_string(&1), "Elixir.LemonMCP")) == []
  end
end
