defmodule LemonMCP.SandboxTest do
  # Stdio servers in a sandbox through Elixir (docs/sandbox.md): the host
  # reports what confines a server, a confined server answers, its write
  # outside allowWrite fails while ours succeeds, and a daemon it leaves
  # behind, confined or not, is gone once the host closes.
  use ExUnit.Case, async: true

  alias LemonMCP.Host
  alias LemonMCP.Test.Fixture

  # A command line of its own, so the daemon can be found from outside
  # (inside the sandbox its pid is one of its own namespace).
  defp token, do: "300.#{:erlang.unique_integer([:positive])}"

  # A server that tries a write outside what it is granted, double-forks a
  # daemon that calls setsid, then becomes the fixture.
  defp server(token, outside) do
    %{
      "command" => "/bin/sh",
      "args" => [
        "-c",
        "echo escaped > '#{outside}/from-server' 2>/dev/null; " <>
          "( setsid sleep #{token} & ) </dev/null >/dev/null 2>&1; exec '#{Fixture.path()}'"
      ],
      "timeouts" => %{"close_grace_ms" => 300}
    }
  end

  defp find(cmdline) do
    Path.wildcard("/proc/[0-9]*/cmdline")
    |> Enum.find_value(fn path ->
      case File.read(path) do
        {:ok, ^cmdline} -> path |> Path.dirname() |> Path.basename()
        _ -> nil
      end
    end)
  end

  @tag :tmp_dir
  test "a sandboxed and a plain server", %{tmp_dir: dir} do
    File.chmod!(dir, 0o777)
    File.mkdir_p!(Path.join(dir, "plain"))
    boxed_token = token()
    plain_token = token()

    config = %{
      "mcpServers" => %{
        "boxed" => Map.put(server(boxed_token, dir), "sandboxEnabled", true),
        "plain" => server(plain_token, Path.join(dir, "plain"))
      }
    }

    {:ok, h} = Host.start_link(config)
    assert :ok = Host.await_ready(h, 15_000)
    {:ok, servers} = Host.servers(h)
    assert %{"namespaces" => true, "landlock" => abi, "network" => "none"} = servers["boxed"]["sandbox"]
    assert abi >= 6
    refute Map.has_key?(servers["plain"], "sandbox")
    assert {:ok, [%{"text" => "confined"}]} = Host.call_tool(h, "boxed__echo", %{text: "confined"})

    refute File.exists?(Path.join(dir, "from-server")), "the confined server wrote outside allowWrite"
    assert File.exists?(Path.join([dir, "plain", "from-server"])), "the control: an unconfined server writes"
    File.write!(Path.join(dir, "from-app"), "app")

    daemons =
      for t <- [boxed_token, plain_token] do
        cmdline = "sleep\0#{t}\0"
        assert Fixture.eventually(fn -> find(cmdline) != nil end, 30_000), "the daemon never started"
        find(cmdline)
      end

    assert :ok = Host.close(h)

    for pid <- daemons do
      assert Fixture.eventually(fn -> not Fixture.alive?(pid) end, 30_000), "the daemon #{pid} outlived the host"
    end
  end

  # The BEAM ignores SIGCHLD, so the kernel reaps its children without a
  # status: a server's end was "its exit status is unknown". The sandbox
  # helper, which every stdio server runs under, reports it on its status
  # pipe: a server killed by a signal, confined or not, is named so.
  test "a crashed server is reported with its signal, confined or not" do
    for boxed <- [false, true] do
      server = %{
        "command" => "/bin/sh",
        "args" => ["-c", "kill -KILL $$"],
        "restart" => %{"max_restarts" => 1, "backoff_ms" => 20},
        "timeouts" => %{"close_grace_ms" => 300}
      }

      server = if boxed, do: Map.put(server, "sandboxEnabled", true), else: server
      {:ok, h} = Host.start_link(%{"mcpServers" => %{"s" => server}})

      gave_up = fn ->
        {:ok, servers} = Host.servers(h)
        String.contains?(servers["s"]["last_error"] || "", "gave up")
      end

      assert Fixture.eventually(gave_up, 30_000)
      {:ok, %{"s" => s}} = Host.servers(h)
      assert s["signal"] == "SIGKILL", "confined: #{boxed}: #{inspect(s)}"
      assert s["cause"] == "server was killed by SIGKILL"
      assert Map.has_key?(s, "sandbox") == boxed
      :ok = Host.close(h)
    end
  end

  # ------------------------------------------------------------ escapes

  @escapes Path.expand("../../../tests/fixtures/escapes/escapes.sh", __DIR__)
  @worker Path.expand("escapes_worker.exs", __DIR__)
  @fails_closed_worker Path.expand("fails_closed_worker.exs", __DIR__)
  @nobody 65534
  @escape_count 10

  defp own_uid, do: System.cmd("id", ["-u"]) |> elem(0) |> String.trim() |> String.to_integer()

  # What an unprivileged worker runs, copied where it can read it: the
  # checkout may lie beneath a directory of mode 0700 (a home, mktemp -d).
  # The application (its ebin and priv: the NIF, the library, the helper),
  # the workers, the fixture, withoutlayers and the escape script, in one
  # 0755 directory; the caller removes it. Returns the staged paths.
  defp stage do
    dir = Path.join(System.tmp_dir!(), "lemonmcp-ex-stage-#{System.unique_integer([:positive])}")
    app = Path.join(dir, "lemon_mcp")
    ebin = :code.which(LemonMCP.Host) |> Path.dirname()
    File.mkdir_p!(app)
    File.cp_r!(ebin, Path.join(app, "ebin"))
    # priv is a symbolic link in _build: its entries are copied.
    priv = :code.priv_dir(:lemon_mcp) |> to_string()
    File.mkdir_p!(Path.join(app, "priv"))
    for f <- File.ls!(priv), do: File.cp_r!(Path.join(priv, f), Path.join([app, "priv", f]))

    files =
      for {key, src} <- [
            fixture: Fixture.path(),
            wrapper: Path.join(Path.dirname(Fixture.path()), "withoutlayers"),
            escapes: @escapes,
            worker: @worker,
            fails_closed_worker: @fails_closed_worker
          ],
          into: %{} do
        dst = Path.join(dir, Path.basename(src))
        File.cp!(src, dst)
        File.chmod!(dst, 0o755)
        {key, dst}
      end

    for d <- [dir, app | Path.wildcard(Path.join(app, "**"))], File.dir?(d), do: File.chmod!(d, 0o755)
    Map.merge(files, %{dir: dir, ebin: Path.join(app, "ebin")})
  end

  # The worker's lines (test/escapes_worker.exs), run in a VM of its own as
  # uid, with a temporary, home and cache directory that uid owns.
  defp escapes(uid, mode, env \\ []) do
    home = Path.join(System.tmp_dir!(), "lemonmcp-escapes-#{System.pid()}-#{System.unique_integer([:positive])}")
    File.mkdir!(home)

    try do
      File.chown!(home, uid)
      File.chgrp!(home, uid)
      st = if uid == own_uid(), do: nil, else: stage()
      ebin = if st, do: st.ebin, else: :code.which(LemonMCP.Host) |> Path.dirname()

      {worker, fixture, script} =
        if st, do: {st.worker, st.fixture, st.escapes}, else: {@worker, Fixture.path(), @escapes}

      argv = [System.find_executable("elixir"), "-pa", ebin, worker, mode, fixture, script]

      {cmd, args} =
        if uid == own_uid(),
          do: {hd(argv), tl(argv)},
          else: {"setpriv", ["--reuid=#{uid}", "--regid=#{uid}", "--clear-groups" | argv]}

      env = [{"TMPDIR", home}, {"HOME", home}, {"XDG_CACHE_HOME", Path.join(home, "cache")} | env]
      {out, status} = System.cmd(cmd, args, env: env, stderr_to_stdout: true)
      assert status == 0, out
      lines = String.split(out, "\n", trim: true)
      facts = for l <- lines, [k, v] <- [String.split(l, " ", parts: 2)], k != "report", into: %{}, do: {k, v}
      report = for "report " <> l <- lines, do: String.split(l, " ")
      assert List.last(report) == ["end"], out
      if st, do: File.rm_rf!(st.dir)
      {facts, report, out}
    after
      File.rm_rf!(home)
    end
  end

  defp outcomes(report, kind), do: for([^kind, name, outcome] <- report, into: %{}, do: {name, outcome})

  @tag timeout: 300_000
  test "escapes are refused with the VM run as root and as nobody" do
    # The control, without sandbox or helper: every escape gets through.
    {facts, report, out} = escapes(own_uid(), "control", [{"LEMONMCP_SANDBOX_HELPER", "/nonexistent"}])
    escaped = outcomes(report, "escape")
    assert map_size(escaped) == @escape_count, out
    assert Enum.all?(Map.values(escaped), &(&1 == "ok")), "the control should let every escape through:\n#{out}"
    assert facts["udp_received"] == "true" and facts["daemon_gone"] == "false", out

    uids = if own_uid() == 0, do: [0, @nobody], else: [own_uid()]

    for uid <- uids do
      {facts, report, out} = escapes(uid, "sandbox")
      assert facts["uid"] == "#{uid}", out
      assert %{"ready" => "true", "namespaces" => "true", "echo" => "true", "daemon_started" => "true"} = facts
      assert outcomes(report, "escape") == Map.new(escaped, fn {k, _} -> {k, "denied"} end), "uid #{uid}:\n#{out}"
      assert outcomes(report, "control") |> Map.values() |> Enum.all?(&(&1 == "ok")), out
      assert facts["udp_received"] == "false", "uid #{uid}: a datagram reached the host's loopback"
      assert facts["daemon_gone"] == "true", "uid #{uid}: the daemon outlived the host"
    end
  end

  # ------------------------------------------------------- fails closed

  @layers %{
    "-landlock" => "Landlock: landlock_create_ruleset(VERSION) failed: function not implemented",
    "-userns" => "namespaces: clone(CLONE_NEWUSER|CLONE_NEWPID|CLONE_NEWNET|...) failed: no space left on device"
  }

  # On a machine without Landlock (a seccomp filter answers ENOSYS to its
  # system calls, for the VM and its children) or without user namespaces
  # (user.max_user_namespaces=0 inside a namespace), made by
  # tests/fixtures/withoutlayers, with the VM run as root and as nobody: a
  # server with "sandboxEnabled": true does not start, its error names the
  # layer and why, and it writes nothing; "required": false starts and
  # names what is missing.
  @tag timeout: 300_000
  test "a sandbox that cannot be had in full does not start" do
    wrapper = Path.join(Path.dirname(Fixture.path()), "withoutlayers")
    assert File.exists?(wrapper), "#{wrapper} is not built (make fixtures)"
    uids = if own_uid() == 0, do: [0, @nobody], else: [own_uid()]

    for {flag, layer} <- @layers, uid <- uids do
      home = Path.join(System.tmp_dir!(), "lemonmcp-fails-closed-#{System.unique_integer([:positive])}")
      File.mkdir!(home)

      try do
        File.chown!(home, uid)
        File.chgrp!(home, uid)
        st = stage()

        argv = [
          st.wrapper,
          flag,
          "--",
          System.find_executable("elixir"),
          "-pa",
          st.ebin,
          st.fails_closed_worker,
          st.fixture
        ]

        {cmd, args} =
          if uid == own_uid(),
            do: {hd(argv), tl(argv)},
            else: {"setpriv", ["--reuid=#{uid}", "--regid=#{uid}", "--clear-groups" | argv]}

        env = [{"TMPDIR", home}, {"HOME", home}, {"XDG_CACHE_HOME", Path.join(home, "cache")}]
        {out, status} = System.cmd(cmd, args, env: env, stderr_to_stdout: true)
        assert status == 0, "#{flag} uid #{uid}: the worker exited #{status}:\n#{out}"

        facts =
          for l <- String.split(out, "\n", trim: true),
              [k, v] <- [String.split(l, " ", parts: 2)],
              into: %{},
              do: {k, v}

        assert facts["boxed_state"] == "failed", "#{flag} uid #{uid}:\n#{out}"
        assert facts["boxed_error"] =~ "sandbox: cannot be set up in full", out
        assert facts["boxed_error"] =~ layer, out
        assert facts["boxed_sandbox"] == "false", out
        assert facts["written_boxed"] == "false", "#{flag} uid #{uid}: the refused server ran:\n#{out}"
        assert facts["loose_state"] == "ready" and facts["echo"] == "true", out
        assert facts["loose_missing"] != "", out
        File.rm_rf!(st.dir)
      after
        File.rm_rf!(home)
      end
    end
  end
end
