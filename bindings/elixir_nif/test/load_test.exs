defmodule LemonMCP.LoadTest do
  # 1,000 concurrent calls from 100 processes on one client, and no
  # long_schedule event attributable to the NIF meanwhile.
  #
  # Not async: the system monitor is one per node, and the measurement
  # wants the VM to itself.
  use ExUnit.Case, async: false

  alias LemonMCP.{Client, NIF}
  alias LemonMCP.Test.Fixture

  @processes 100
  @per_process 10

  defp drain_monitor(acc) do
    receive do
      {:monitor, who, :long_schedule, info} -> drain_monitor([{who, info} | acc])
    after
      0 -> Enum.reverse(acc)
    end
  end

  defp nif_mfa?({LemonMCP.NIF, _, _}), do: true
  defp nif_mfa?(_), do: false

  # The monitor measures wall time, and on a shared, loaded machine the OS
  # can deschedule a scheduler thread for over 10 ms in the middle of any
  # code. The two look alike to the monitor but not to the kernel: a NIF
  # that blocks sleeps, while a descheduled thread waits for a CPU, and the
  # kernel counts that wait (/proc/self/task/TID/schedstat). So an
  # attempt's events count against the NIF only when what they took past
  # the threshold is more than the normal schedulers waited for a CPU
  # meanwhile (on a quiet machine that wait is near nothing, and a NIF that
  # blocks fails here). A run with events that count is repeated once, and
  # the test fails when the repeat shows them too.
  @threshold_ms 10

  defp without_nif_long_schedules(attempt_fun, attributable?) do
    previous = :erlang.system_monitor(self(), [{:long_schedule, @threshold_ms}])

    try do
      Enum.reduce_while(1..2, [], fn attempt, seen ->
        _ = drain_monitor([])
        waited_before = schedulers_cpu_wait_ms()
        value = attempt_fun.()
        events = for {who, info} <- drain_monitor([]), attributable?.(who, info), do: {who, info}
        waited = schedulers_cpu_wait_ms() - waited_before
        past_threshold = Enum.sum(for {_, info} <- events, do: max(info[:timeout] - @threshold_ms, 0))
        nif_events = if past_threshold <= waited, do: [], else: events

        cond do
          nif_events == [] ->
            {:halt, {value, seen}}

          attempt == 2 ->
            flunk(
              "long_schedule events attributable to the NIF, twice: #{inspect(seen ++ nif_events)} (the schedulers waited #{waited} ms for a CPU)"
            )

          true ->
            {:cont, seen ++ nif_events}
        end
      end)
    after
      case previous do
        :undefined -> :erlang.system_monitor(:undefined)
        {pid, opts} -> :erlang.system_monitor(pid, opts)
      end
    end
  end

  # How long the normal scheduler threads ("N_scheduler") have waited on a
  # run queue, in ms: the second field of each thread's schedstat.
  defp schedulers_cpu_wait_ms do
    ns =
      for tid <- File.ls!("/proc/self/task"),
          {:ok, comm} <- [File.read("/proc/self/task/#{tid}/comm")],
          Regex.match?(~r/^\d+_scheduler$/, String.trim(comm)),
          {:ok, stat} <- [File.read("/proc/self/task/#{tid}/schedstat")],
          reduce: 0 do
        acc -> acc + (stat |> String.split() |> Enum.at(1) |> String.to_integer())
      end

    div(ns, 1_000_000)
  end

  defp concurrent_calls(c) do
    parent = self()

    :timer.tc(fn ->
      callers =
        for p <- 1..@processes do
          spawn_link(fn ->
            # Each process has all of its requests in flight at once.
            reqs =
              for i <- 1..@per_process do
                text = "p#{p}-#{i}"
                {text, Client.async_request(c, "tools/call", %{name: "echo", arguments: %{text: text}}, 30_000)}
              end

            got = for {text, req} <- reqs, do: {text, Client.await_response(req, 60_000)}
            send(parent, {:done, self(), got})
          end)
        end

      for pid <- callers, into: [] do
        receive do
          {:done, ^pid, got} -> got
        after
          90_000 -> flunk("a caller did not finish")
        end
      end
      |> List.flatten()
    end)
  end

  test "1,000 concurrent calls from 100 processes, without a long schedule in the NIF" do
    c = Fixture.start!()
    attributable? = fn who, info -> who == c or nif_mfa?(info[:in]) or nif_mfa?(info[:out]) end
    {{us, results}, retried} = without_nif_long_schedules(fn -> concurrent_calls(c) end, attributable?)

    assert length(results) == @processes * @per_process

    for {text, result} <- results do
      assert {:ok, %{"content" => [%{"type" => "text", "text" => ^text}]}} = result
    end

    IO.puts(
      "\n    load: #{length(results)} calls in #{div(us, 1000)} ms " <>
        "(#{Float.round(length(results) / (us / 1_000_000), 0)} calls/s)" <>
        if(retried == [], do: "", else: "; repeated once after #{length(retried)} long_schedule events")
    )
  end

  test "a burst that overfills a stalled server's pipe never blocks the caller" do
    # 500 requests of 4 KiB, all in flight: 2 MiB, far past what the pipe
    # holds, while the server reads nothing (its stall_stdin tool stops its
    # reader until SIGUSR1). A NIF that wrote on the caller's scheduler would
    # block on the full pipe, and the burst would never finish queueing: the
    # test then fails by its receive timeout, which a loaded machine cannot
    # cause. The library queues what the pipe cannot take; once the server
    # reads again, every call completes.
    {:ok, c} = NIF.client_new(%{"transport" => %{"type" => "stdio", "command" => Fixture.path()}})
    tag = make_ref()
    :ok = NIF.set_handlers(c, tag)
    :ok = NIF.connect(c)
    assert_receive {:lmcp_event, ^tag, :ready, _}, 10_000

    call_sync = fn name, args ->
      {:ok, id} = NIF.call(c, "tools/call", %{"name" => name, "arguments" => args}, %{"timeout_ms" => 60_000})
      assert_receive {:lmcp_done, ^id, 0, result}, 60_000
      result
    end

    %{"content" => [%{"text" => pid_text}]} = call_sync.("pid", %{})
    os_pid = String.to_integer(pid_text)
    call_sync.("stall_stdin", %{"ms" => 600_000})

    parent = self()
    params = %{"name" => "echo", "arguments" => %{"text" => String.duplicate("x", 4_096)}}

    burster =
      spawn_link(fn ->
        ids =
          for _ <- 1..500 do
            {:ok, id} = NIF.call(c, "tools/call", params, %{"timeout_ms" => 600_000})
            id
          end

        # The completions come to the process that made the calls.
        send(parent, {:queued, self()})
        statuses = for id <- ids, do: receive(do: ({:lmcp_done, ^id, st, _} -> st))
        send(parent, {:completed, self(), statuses})
      end)

    assert_receive {:queued, ^burster}, 60_000, "the burst blocked on the stalled server's pipe"
    {_, 0} = System.cmd("kill", ["-USR1", Integer.to_string(os_pid)])
    assert_receive {:completed, ^burster, statuses}, 90_000
    assert Enum.all?(statuses, &(&1 == 0)), inspect(Enum.frequencies(statuses))
    NIF.free(c)
  end

  test "a large argument is encoded on a dirty scheduler, not a normal one" do
    c = Fixture.start!()
    text = String.duplicate("y", 2_000_000)
    assert {:ok, [%{"text" => ^text}]} = Client.call_tool(c, "echo", %{text: text})
  end
end
