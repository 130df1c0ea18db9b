defmodule LemonMCP.NifBuild do
  @moduledoc """
  Finds the liblemonmcp the NIF is built against, and its header. In order:

    1. `LEMONMCP_LIB` (a path to `liblemonmcp.so.1`), with its header from
       `LEMONMCP_INCLUDE`, else `../include` beside the library's directory,
       else the repository's `include/`;
    2. the repository's `build/` (`make lib`), when this project sits in its
       checkout;
    3. an installed library, through `pkg-config lemonmcp` (`make install`
       writes `lemonmcp.pc`; set `PKG_CONFIG_PATH` for a private prefix).

  The version of this project is the header's `LMCP_VERSION_STRING`: it is
  written once, in the C header.
  """

  @repo Path.expand("../..", __DIR__)

  @doc "Returns `{library_path, include_dir, source}` or raises with what to do."
  def locate do
    case System.get_env("LEMONMCP_LIB") do
      lib when is_binary(lib) and lib != "" ->
        unless File.regular?(lib), do: Mix.raise("LEMONMCP_LIB names no file: #{lib}")
        {lib, include_for(lib), "LEMONMCP_LIB"}

      _ ->
        repo_lib = Path.join(@repo, "build/liblemonmcp.so.1")

        cond do
          File.regular?(repo_lib) -> {repo_lib, Path.join(@repo, "include"), "the repository's build/"}
          found = pkg_config() -> found
          true -> Mix.raise(missing())
        end
    end
  end

  @doc "The library version, from the header `locate/0` finds (or the repository's)."
  def version do
    header =
      try do
        {_, include, _} = locate()
        Path.join(include, "lemonmcp.h")
      rescue
        Mix.Error -> Path.join(@repo, "include/lemonmcp.h")
      end

    with {:ok, text} <- File.read(header),
         [_, v] <- Regex.run(~r/^#define LMCP_VERSION_STRING "([^"]+)"$/m, text) do
      v
    else
      _ -> Mix.raise("LMCP_VERSION_STRING not found in #{header}")
    end
  end

  defp include_for(lib) do
    beside = Path.expand("../include", Path.dirname(lib))

    cond do
      (dir = System.get_env("LEMONMCP_INCLUDE")) not in [nil, ""] -> dir
      File.regular?(Path.join(beside, "lemonmcp.h")) -> beside
      true -> Path.join(@repo, "include")
    end
  end

  defp pkg_config do
    with exe when is_binary(exe) <- System.find_executable("pkg-config"),
         {libdir, 0} <- System.cmd(exe, ["--variable=libdir", "lemonmcp"], stderr_to_stdout: true),
         {incdir, 0} <- System.cmd(exe, ["--variable=includedir", "lemonmcp"], stderr_to_stdout: true),
         lib = Path.join(String.trim(libdir), "liblemonmcp.so.1"),
         true <- File.regular?(lib) do
      {lib, String.trim(incdir), "pkg-config"}
    else
      _ -> nil
    end
  end

  defp missing do
    """
    liblemonmcp not found: not in LEMONMCP_LIB, not built in this repository
    (#{Path.join(@repo, "build")}), and `pkg-config lemonmcp` finds no installed library.
    Build it (`make lib` at the repository root), install it (`make install PREFIX=...`,
    then PKG_CONFIG_PATH=PREFIX/lib/pkgconfig if the prefix is private), or set LEMONMCP_LIB.
    """
  end
end

defmodule Mix.Tasks.Compile.LemonmcpNif do
  @moduledoc """
  Builds the NIF shim (`c_src/`) into `priv/` with `make`, next to a copy of
  `liblemonmcp.so.1`. Where the library comes from: see `LemonMCP.NifBuild`.
  """
  use Mix.Task.Compiler

  @impl true
  def run(_args) do
    {lib, include, _source} = LemonMCP.NifBuild.locate()
    make = System.find_executable("make") || Mix.raise("make is required to build the NIF")

    env = [
      {"MIX_APP_PATH", Mix.Project.app_path()},
      {"LEMONMCP_LIB", lib},
      {"LEMONMCP_INCLUDE", include}
    ]

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

  def project do
    [
      app: :lemon_mcp,
      version: LemonMCP.NifBuild.version(),
      elixir: "~> 1.14",
      compilers: [:lemonmcp_nif] ++ Mix.compilers(),
      start_permanent: false,
      deps: [],
      description: "A Model Context Protocol (MCP) client over liblemonmcp (a NIF)",
      # The repository's LICENSE; the Python package and lemonmcp.pc say the same.
      package: [licenses: ["Apache-2.0"], files: ~w(lib c_src mix.exs .formatter.exs README.md)],
      test_coverage: [ignore_modules: [Mix.Tasks.Compile.LemonmcpNif, LemonMCP.NifBuild]]
    ]
  end

  # A library application: no application callback and nothing started on
  # load or start. The host owns every client.
  def application do
    [extra_applications: [:logger]]
  end
end
