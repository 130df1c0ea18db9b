defmodule LemonMCP.NifBuild do
  @moduledoc """
  Where the NIF comes from (docs/install.md, "Elixir"):

    * precompiled, with no C compiler and no Go (`LemonMCP.NifPrecompiled`),
      when a source is configured: `LEMONMCP_NIF_URL`, else the
      application's `config :lemon_mcp, nif_url: ...` (a directory,
      `file://` or `https://`);
    * built from source when `LEMONMCP_BUILD=1`, or when nothing is
      configured in a repository checkout (as before), or when
      `LEMONMCP_LIB` names the library to build against.

  A package (`make dist`'s `lemon_mcp-V.tar.gz`) with no source configured
  stops and says what to set.

  For a source build, the liblemonmcp the NIF is built against, and its
  header, in order:

    1. `LEMONMCP_LIB` (a path to `liblemonmcp.so.1`), with its header from
       `LEMONMCP_INCLUDE`, else `../include` beside the library's directory,
       else the repository's `include/`;
    2. the repository's `build/` (`make lib`), when this project sits in its
       checkout;
    3. an installed library, through `pkg-config lemonmcp` (`make install`
       writes `lemonmcp.pc`; set `PKG_CONFIG_PATH` for a private prefix).

  The version of this project is the header's `LMCP_VERSION_STRING`: it is
  written once, in the C header (a package carries a copy in `include/`).
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

  @package_header Path.expand("include/lemonmcp.h", __DIR__)

  @doc """
  `:build`, or `{:precompiled, url, checksum_file}`: see the module doc.
  """
  def source do
    url = configured_url()

    case System.get_env("LEMONMCP_BUILD") do
      "1" ->
        :build

      forced when forced not in [nil, "", "0"] ->
        Mix.raise("LEMONMCP_BUILD is #{inspect(forced)}: 1 builds the NIF from source, 0 (or unset) does not")

      _ when url != nil ->
        {:precompiled, url, checksum_file!()}

      _ ->
        cond do
          System.get_env("LEMONMCP_LIB") not in [nil, ""] -> :build
          File.regular?(@package_header) -> Mix.raise(no_source())
          true -> :build
        end
    end
  end

  defp configured_url do
    case System.get_env("LEMONMCP_NIF_URL") do
      url when is_binary(url) and url != "" ->
        url

      _ ->
        case Application.get_env(:lemon_mcp, :nif_url) do
          nil -> nil
          url when is_binary(url) and url != "" -> url
          other -> Mix.raise("config :lemon_mcp, nif_url: must be a string, got #{inspect(other)}")
        end
    end
  end

  @doc "The checksum file name for this version."
  def checksum_name, do: "lemon_mcp-nif-#{version()}.sha256"

  # The package's own checksum file, else (in a checkout) make dist's.
  defp checksum_file! do
    candidates = [Path.join(__DIR__, checksum_name()), Path.join(@repo, "dist/" <> checksum_name())]

    Enum.find(candidates, &File.regular?/1) ||
      Mix.raise("""
      no NIF checksum file: #{Enum.join(candidates, " nor ")} exists.
      A package from `make dist` carries it; in a checkout run `make dist`, or build from
      source with LEMONMCP_BUILD=1.
      """)
  end

  defp no_source do
    """
    lemon_mcp: no precompiled NIF source is configured.
    Set LEMONMCP_NIF_URL (or `config :lemon_mcp, nif_url: ...` in the application's config) to the
    directory or URL (file:// or https://) holding #{LemonMCP.NifPrecompiled.archive_name()},
    or set LEMONMCP_BUILD=1 to build the NIF from source (a C compiler and liblemonmcp).
    """
  end

  @doc "The library version, from the package's header, the one `locate/0` finds, or the repository's."
  def version, do: define(~r/^#define LMCP_VERSION_STRING "([^"]+)"$/m, "LMCP_VERSION_STRING")

  @doc "The library's ABI version (its SONAME is liblemonmcp.so.<abi>), from the same header."
  def abi, do: define(~r/^#define LMCP_ABI_VERSION ([0-9]+)$/m, "LMCP_ABI_VERSION")

  defp define(pattern, what) do
    header =
      if File.regular?(@package_header) do
        @package_header
      else
        try do
          {_, include, _} = locate()
          Path.join(include, "lemonmcp.h")
        rescue
          Mix.Error -> Path.join(@repo, "include/lemonmcp.h")
        end
      end

    with {:ok, text} <- File.read(header),
         [_, v] <- Regex.run(pattern, text) do
      v
    else
      _ -> Mix.raise("#{what} not found in #{header}")
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

defmodule LemonMCP.NifPrecompiled do
  @moduledoc """
  Installs a precompiled NIF into `priv/`: the archive
  `lemon_mcp-nif-V-<arch>-linux-gnu.tar.gz` for this machine is read from a
  directory, a `file://` or an `https://` URL, its SHA-256 compared with
  the checksum file, and only then are its three files (the NIF, the
  library, the sandbox helper) written. A mismatch stops the build naming
  the file; nothing is written and a NIF already in `priv/` is removed, so
  nothing is loaded. `https://` verifies the server against the system's
  CA certificates, or the PEM file in `LEMONMCP_NIF_CACERTFILE`.
  """

  @stamp ".lemon_mcp-nif"

  defp files, do: ["lmcp_nif.so", soname(), "lemonmcp-sandbox"]
  defp soname, do: "liblemonmcp.so.#{LemonMCP.NifBuild.abi()}"

  @doc "The archive for this machine."
  def archive_name, do: "lemon_mcp-nif-#{LemonMCP.NifBuild.version()}-#{target()}.tar.gz"

  @doc "This machine's target, as the archives name it: `x86_64-linux-gnu` or `aarch64-linux-gnu`."
  def target do
    arch = to_string(:erlang.system_info(:system_architecture))

    case String.split(arch, "-") do
      [cpu | rest] when cpu in ["x86_64", "aarch64"] ->
        if String.ends_with?(Enum.join(rest, "-"), "linux-gnu"),
          do: "#{cpu}-linux-gnu",
          else: unsupported(arch)

      _ ->
        unsupported(arch)
    end
  end

  defp unsupported(arch) do
    Mix.raise(
      "lemon_mcp: no precompiled NIF for #{arch} (x86_64 and aarch64 Linux with glibc are built); " <>
        "LEMONMCP_BUILD=1 builds it from source"
    )
  end

  @doc "Installs the NIF into priv_dir from url, checked against checksum_file."
  def install(url, checksum_file, priv_dir) do
    name = archive_name()
    expected = expected_sum(checksum_file, name)
    stamp = Path.join(priv_dir, @stamp)

    # Installed before from the same archive, and unchanged since: the
    # stamp holds the archive's checksum and each file's.
    if File.read(stamp) == {:ok, stamp_text(name, expected, installed(priv_dir))} do
      :ok
    else
      where = join(url, name)
      Mix.shell().info("lemon_mcp: fetching the precompiled NIF #{name} from #{redact(where)}")
      data = fetch(where)
      actual = sha256(data)

      if actual != expected do
        remove(priv_dir)

        Mix.raise("""
        lemon_mcp: checksum mismatch for #{name} (from #{redact(where)}):
        #{Path.basename(checksum_file)} says sha256 #{expected}, the file has #{actual}.
        Nothing was installed; the NIF will not load.
        """)
      end

      files = unpack(data, name)
      write(priv_dir, files, stamp, stamp_text(name, expected, Map.new(files, fn {n, bin} -> {n, sha256(bin)} end)))
    end
  end

  defp sha256(bin), do: :crypto.hash(:sha256, bin) |> Base.encode16(case: :lower)

  defp installed(priv_dir) do
    Map.new(files(), fn f ->
      case File.read(Path.join(priv_dir, f)) do
        {:ok, bin} -> {f, sha256(bin)}
        {:error, _} -> {f, "missing"}
      end
    end)
  end

  defp stamp_text(name, sum, file_sums) do
    Enum.map_join([{name, sum} | Enum.sort(file_sums)], fn {n, s} -> "#{s}  #{n}\n" end)
  end

  defp expected_sum(file, name) do
    # sha256sum's lines, "SUM  NAME" (or "SUM *NAME"); any other line makes
    # the file unreadable as a whole, said so rather than a MatchError.
    sums =
      String.split(File.read!(file), "\n", trim: true)
      |> Enum.with_index(1)
      |> Map.new(fn {line, n} ->
        case String.split(line, ~r/\s+\*?/, parts: 2) do
          [sum, entry] when entry != "" ->
            {entry, String.downcase(sum)}

          _ ->
            Mix.raise(~s(lemon_mcp: #{file} is not a checksum file: line #{n} is not "SHA256  NAME"))
        end
      end)

    case sums do
      %{^name => sum} ->
        if sum =~ ~r/^[0-9a-f]{64}$/,
          do: sum,
          else: Mix.raise("lemon_mcp: #{file} has no valid sha256 for #{name}")

      _ ->
        Mix.raise("lemon_mcp: #{file} lists no #{name} (no precompiled NIF for #{target()} in this release)")
    end
  end

  defp join(url, name), do: String.trim_trailing(url, "/") <> "/" <> name

  # Userinfo in a URL is a credential: never printed.
  defp redact(url), do: Regex.replace(~r{^(https://)[^/@]*@}, url, "\\1")

  defp fetch("https://" <> _ = url), do: https_get(url)
  defp fetch("file://" <> path), do: read_file(URI.decode(path))

  defp fetch(url) do
    if url =~ ~r{^[a-zA-Z][a-zA-Z0-9+.-]*://},
      do: Mix.raise("lemon_mcp: #{redact(url)}: the NIF URL must be https://, file:// or a directory"),
      else: read_file(Path.expand(url))
  end

  defp read_file(path) do
    case File.read(path) do
      {:ok, data} -> data
      {:error, reason} -> Mix.raise("lemon_mcp: cannot read #{path}: #{:file.format_error(reason)}")
    end
  end

  defp https_get(url) do
    {:ok, _} = Application.ensure_all_started(:inets)
    {:ok, _} = Application.ensure_all_started(:ssl)

    # verify_peer checks the chain and (httpc passes the URL's host as
    # server_name_indication) the host name or IP address.
    ssl = [verify: :verify_peer, cacerts: cacerts(), depth: 4]

    opts = [ssl: ssl, timeout: 120_000, connect_timeout: 15_000, autoredirect: true]

    case :httpc.request(:get, {String.to_charlist(url), []}, opts, body_format: :binary) do
      {:ok, {{_, 200, _}, _headers, body}} ->
        body

      {:ok, {{_, status, reason}, _, _}} ->
        Mix.raise("lemon_mcp: #{redact(url)} answered #{status} #{reason}")

      {:error, reason} ->
        Mix.raise("lemon_mcp: cannot fetch #{redact(url)}: #{inspect(reason)}")
    end
  end

  defp cacerts do
    case System.get_env("LEMONMCP_NIF_CACERTFILE") do
      file when is_binary(file) and file != "" ->
        for {:Certificate, der, _} <- :public_key.pem_decode(read_file(file)), do: der

      _ ->
        :public_key.cacerts_get()
    end
  end

  # The archive's members, in memory; exactly the expected three files.
  defp unpack(data, name) do
    case :erl_tar.extract({:binary, data}, [:compressed, :memory]) do
      {:ok, members} ->
        got = Map.new(members, fn {n, bin} -> {to_string(n), bin} end)

        if Enum.sort(Map.keys(got)) != Enum.sort(files()),
          do: Mix.raise("lemon_mcp: #{name} holds #{inspect(Map.keys(got))}, not #{inspect(files())}")

        got

      {:error, reason} ->
        Mix.raise("lemon_mcp: #{name} is not a readable archive: #{inspect(reason)}")
    end
  end

  # Each file through a temporary name and a rename: a running VM that has
  # the old one mapped keeps it intact.
  defp write(priv_dir, files, stamp, stamp_text) do
    File.mkdir_p!(priv_dir)
    File.rm(stamp)

    for {name, bin} <- files do
      tmp = Path.join(priv_dir, ".#{name}.#{System.unique_integer([:positive])}")
      File.write!(tmp, bin)
      File.chmod!(tmp, 0o755)
      File.rename!(tmp, Path.join(priv_dir, name))
    end

    link = Path.join(priv_dir, "liblemonmcp.so")
    File.rm(link)
    File.ln_s!(soname(), link)
    File.write!(stamp, stamp_text)
    :ok
  end

  defp remove(priv_dir) do
    for f <- [@stamp, "liblemonmcp.so" | files()], do: File.rm(Path.join(priv_dir, f))
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
    case LemonMCP.NifBuild.source() do
      {:precompiled, url, checksum_file} ->
        :ok = LemonMCP.NifPrecompiled.install(url, checksum_file, Path.join(__DIR__, "priv"))
        # Mix links priv/ into _build before the compilers run; on a fresh
        # package priv/ did not exist yet, so link it now.
        Mix.Project.build_structure()
        {:ok, []}

      :build ->
        build()
    end
  end

  defp build do
    {lib, include, source} = LemonMCP.NifBuild.locate()
    make = System.find_executable("make") || Mix.raise("make is required to build the NIF")
    Mix.shell().info("lemon_mcp: building the NIF from source against #{lib} (#{source})")

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
      # make dist adds include/lemonmcp.h (the version) and the NIF checksum file.
      package: [licenses: ["Apache-2.0"], files: ~w(lib c_src mix.exs .formatter.exs README.md include *.sha256)],
      test_coverage: [ignore_modules: [Mix.Tasks.Compile.LemonmcpNif, LemonMCP.NifBuild, LemonMCP.NifPrecompiled]]
    ]
  end

  # A library application: no application callback and nothing started on
  # load or start. The host owns every client.
  def application do
    [extra_applications: [:logger]]
  end
end
