defmodule Mix.Tasks.Compile.LemonmcpNif do
  @moduledoc """
  Builds the NIF shim (`c_src/`) into `priv/` with `make`, next to a copy of
  `liblemonmcp.so`. The library comes from `LEMONMCP_LIB` (a path to
  `liblemonmcp.so.1`), or from the repository's `build/` directory.
  """
  use Mix.Task.Compiler

  @impl true
  def run(_args) do
    root = Path.expand("../..", __DIR__)
    lib = System.get_env("LEMONMCP_LIB") || Path.join(root, "build/liblemonmcp.so.1")

    unless File.exists?(lib) do
      Mix.raise("""
      liblemonmcp not found at #{lib}.
      Build it first (`make lib` at the repository root) or set LEMONMCP_LIB.
      """)
    end

    make = System.find_executable("make") || Mix.raise("make is required to build the NIF")

    env = [{"MIX_APP_PATH", Mix.Project.app_path()}, {"LEMONMCP_LIB", lib}]

    case System.cmd(make, ["--no-print-directory", "-s", "-C", Path.join(__DIR__, "c_src")],
           env: env,
           stderr_to_stdout: true
         ) do
      {out, 0} ->
        if out != "", do: Mix.shell().info(String.trim_trailing(out))
        # Mix links priv/ into _build before the compilers run; on a clean
        # checkout priv/ did not exist yet, so link it now.
        Mix.Project.build_structure()
        {:ok, []}

      {out, status} ->
        Mix.shell().error(out)
        Mix.raise("building the NIF failed (make exited with #{status})")
    end
  end

  @impl true
  def clean do
    System.cmd("make", ["-s", "-C", Path.join(__DIR__, "c_src"), "clean"], stderr_to_stdout: true)
    :ok
  end
end

defmodule LemonMCP.MixProject do
  use Mix.Project

  # The version is written once, as LMCP_VERSION_STRING in the C header.
  @header Path.expand("../../include/lemonmcp.h", __DIR__)
  @external_resource @header
  @version (case Regex.run(~r/^#define LMCP_VERSION_STRING "([^"]+)"$/m, File.read!(@header)) do
              [_, v] -> v
              _ -> Mix.raise("LMCP_VERSION_STRING not found in #{@header}")
            end)

  def project do
    [
      app: :lemon_mcp,
      version: @version,
      elixir: "~> 1.14",
      compilers: [:lemonmcp_nif] ++ Mix.compilers(),
      start_permanent: false,
      deps: [],
      test_coverage: [ignore_modules: [Mix.Tasks.Compile.LemonmcpNif]]
    ]
  end

  # A library application: no application callback and nothing started on
  # load or start. The host owns every client.
  def application do
    [extra_applications: [:logger]]
  end
end
