# LemonMCP through the Elixir NIF binding, for `make bench` (tests/bench).
# Run from bindings/elixir_nif with `mix run PATH/exclient.exs -- FLAGS`;
# the same flags and JSON line as tests/bench/benchclient:
#   -mode calls|large -n N -par P -pn PN (-stdio "CMD ARGS" | -url URL)
# Calls are LemonMCP.Client.call_tool/4 from the measuring process; the
# P-way figure is P processes calling one client. Figures are printed,
# never checked.

alias LemonMCP.Client

# OptionParser wants --flag; the driver passes -flag (as Go's flag does).
argv = System.argv() |> Enum.map(fn "-" <> rest = a -> if String.starts_with?(rest, "-"), do: a, else: "--" <> rest; a -> a end)
{opts, _, _} = OptionParser.parse(argv, strict: [mode: :string, stdio: :string, url: :string, n: :integer, par: :integer, pn: :integer])
mode = Keyword.get(opts, :mode, "calls")
n = Keyword.get(opts, :n, 2000)
par = Keyword.get(opts, :par, 16)
pn = Keyword.get(opts, :pn, 4000)
pinned = ["2025-11-25"]
large_bytes = 10 * 1024 * 1024

proc_status = fn field ->
  File.read!("/proc/self/status")
  |> String.split("\n")
  |> Enum.find_value(-1, fn line ->
    case String.split(line) do
      [key, v | _] -> if key == field <> ":", do: String.to_integer(v)
      _ -> nil
    end
  end)
end

# The process's CPU time (user + system, every thread) in µs, from
# /proc/self/stat in clock ticks (100 per second on Linux): coarse, but
# over thousands of calls it gives the CPU one call costs.
cpu_us = fn ->
  stat = File.read!("/proc/self/stat")
  [_, rest] = String.split(stat, ") ", parts: 2)
  fields = String.split(rest)
  (String.to_integer(Enum.at(fields, 11)) + String.to_integer(Enum.at(fields, 12))) * 10_000
end

us = fn fun ->
  {t, _} = :timer.tc(fun)
  t
end

t0 = System.monotonic_time(:microsecond)

{:ok, c} =
  case {opts[:stdio], opts[:url]} do
    {cmd, nil} when is_binary(cmd) ->
      [command | args] = String.split(cmd)
      {:ok, c} = Client.start_link(command: command, args: args, protocol_versions: pinned)
      :ok = Client.await_ready(c, 30_000)
      {:ok, c}

    {nil, url} when is_binary(url) ->
      LemonMCP.Client.HTTP.start_link(url: url, protocol_versions: pinned, timeout: 30_000)
  end

connect_us = System.monotonic_time(:microsecond) - t0
echo = fn -> {:ok, _} = Client.call_tool(c, "echo", %{"text" => "hello"}) end

out =
  case mode do
    "large" ->
      large = fn -> {:ok, _} = Client.call_tool(c, "large", %{"bytes" => large_bytes}) end
      large.()
      ts = Enum.sort(for _ <- 1..n, do: us.(large))
      %{large_ms: Enum.at(ts, div(n, 2)) / 1000, hwm_kb: proc_status.("VmHWM")}

    "calls" ->
      first = us.(echo)
      for _ <- 1..min(div(n, 10), 200), do: echo.()
      cpu0 = cpu_us.()
      lat = Enum.sort(for _ <- 1..n, do: us.(echo))
      cpu = (cpu_us.() - cpu0) / n
      per = div(pn, par)
      pcpu0 = cpu_us.()

      wall =
        us.(fn ->
          1..par
          |> Enum.map(fn _ -> Task.async(fn -> for _ <- 1..per, do: echo.() end) end)
          |> Enum.each(&Task.await(&1, :infinity))
        end)

      %{
        connect_us: connect_us,
        first_us: first,
        p50_us: Enum.at(lat, div(n, 2)),
        p99_us: Enum.at(lat, div(n * 99, 100)),
        cps: per * par / (wall / 1.0e6),
        cpu_us: cpu,
        pcpu_us: (cpu_us.() - pcpu0) / (per * par),
        rss_kb: proc_status.("VmRSS"),
        threads: proc_status.("Threads")
      }
  end

Client.stop(c)
{:ok, json} = LemonMCP.NIF.encode_json(out)
IO.puts(json)
