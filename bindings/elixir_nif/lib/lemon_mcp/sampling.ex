defmodule LemonMCP.Sampling do
  @moduledoc """
  Sampling: how a client answers a server's `sampling/createMessage`.

  Sampling is off unless a client is given one of:

    * `sampling_handler: fun/1` — receives the raw request params (string
      keys, as the server sent them) and returns `{:ok, result_map}` or
      `{:error, reason}`. It wins over a policy.
    * `sampling_policy: opts` — the library's policy, checked before any of
      your code sees the request:
      * `mode:` `:deny` (the default: every request is refused), `:model`
        (bounds, then the delegate) or `:reviewed_model` (bounds, then the
        reviewer, then the delegate)
      * `max_tokens:` the largest `maxTokens` allowed (default 1024)
      * `allowed_models:` a list of model names; empty allows any
      * `max_messages:`, `max_text_chars:` further bounds (0: none)
      * `reviewer: fun/1` — gets a redacted summary (never request text:
        `:request_hash`, `:message_count`, `:roles`, `:content_kinds`,
        `:text_char_count`, `:max_tokens`, `:requested_model`, ...) and
        returns `:approve` / `:approved` / `{:approve, _}` / `{:approved, _}`,
        `:reject` / `{:reject, reason}`, or `{:error, reason}`
      * `delegate: fun/1 | fun/2` — gets the raw params (and the same
        summary) once every check passed, and returns `{:ok, result_map}`
        or `{:error, reason}`

  Handlers, reviewers and delegates run in their own processes, never
  inside the client's loop: a reviewer may take minutes and nothing else
  waits. A refusal reaches the server as a JSON-RPC error (code -1) whose
  data names the reason (`max_tokens_exceeded`, `model_not_allowed`,
  `review_rejected`, ...) with the summary, never the request text;
  subscribers also get a `:sampling_denied` event.
  """

  @summary_keys ~w(request_hash request_hash_short message_count roles content_kinds
                   text_char_count system_prompt_chars max_tokens requested_models
                   include_context has_tools)

  @doc false
  # Splits the policy options into the library's policy (checked by the
  # library, config/, which names a bad member "config.sampling_policy.x")
  # and the Elixir callbacks, checked here since only Elixir has them.
  # Returns {:ok, config_map, callbacks} or {:error, {:invalid_option, message}}.
  def validate_policy(nil), do: {:ok, nil, %{}}

  def validate_policy(opts) when is_list(opts) or is_map(opts) do
    {callbacks, policy} = opts |> Map.new(fn {k, v} -> {to_string(k), v} end) |> Map.split(["reviewer", "delegate"])

    with :ok <- fun(callbacks, "reviewer", [1]),
         :ok <- fun(callbacks, "delegate", [1, 2]),
         :ok <- required(to_string(policy["mode"] || :deny), callbacks) do
      {:ok, policy, Map.new(callbacks, fn {k, v} -> {String.to_atom(k), v} end)}
    end
  end

  # Not a map: the library's own message.
  def validate_policy(other), do: {:ok, other, %{}}

  defp fun(callbacks, k, arities) do
    case callbacks[k] do
      nil -> :ok
      f when is_function(f) -> if Enum.any?(arities, &is_function(f, &1)), do: :ok, else: bad_fun(k, arities)
      _ -> bad_fun(k, arities)
    end
  end

  defp bad_fun(k, arities),
    do: invalid("sampling_policy.#{k} must be a function of arity #{Enum.join(arities, " or ")}")

  defp required(mode, c) do
    cond do
      mode == "reviewed_model" and c["reviewer"] == nil ->
        invalid("sampling_policy: mode :reviewed_model needs a :reviewer")

      mode in ["model", "reviewed_model"] and c["delegate"] == nil ->
        invalid("sampling_policy: mode :#{mode} needs a :delegate")

      true ->
        :ok
    end
  end

  defp invalid(msg), do: {:error, {:invalid_option, msg}}

  # ------------------------------------------------------------ answers

  @doc false
  # The summary a reviewer or delegate sees: atom keys for the known
  # fields, plus :requested_model (the first requested model, or nil).
  def summary(nil), do: nil

  def summary(map) when is_map(map) do
    atomized =
      Enum.into(map, %{}, fn {k, v} ->
        if k in @summary_keys, do: {String.to_atom(k), v}, else: {k, v}
      end)

    Map.put(atomized, :requested_model, List.first(Map.get(atomized, :requested_models) || []))
  end

  @doc false
  # {status, answer} for lmcp_client_respond from a sampling handler's or
  # delegate's return value.
  def handler_answer({:ok, result}) when is_map(result), do: {0, result}

  def handler_answer({:error, reason}) do
    {LemonMCP.Error.code(:policy_denied),
     %{"code" => -1, "message" => "Sampling request rejected", "data" => inspect(reason)}}
  end

  def handler_answer(other) do
    {LemonMCP.Error.code(:internal),
     %{"code" => -32603, "message" => "Invalid sampling handler response", "data" => inspect(other)}}
  end

  @doc false
  # {status, answer} for a review request from the reviewer's verdict.
  def review_answer(v) when v in [:approve, :approved], do: {0, %{"approved" => true}}
  def review_answer({v, _}) when v in [:approve, :approved], do: {0, %{"approved" => true}}
  def review_answer(:reject), do: {0, %{"approved" => false}}
  def review_answer({:reject, r}), do: {0, %{"approved" => false, "reason" => reason_text(r)}}

  def review_answer({:error, r}),
    do: {LemonMCP.Error.code(:internal), %{"message" => "review failed: " <> reason_text(r)}}

  # Not a verdict: the library answers the server invalid_review_result.
  def review_answer(_other), do: {0, %{}}

  defp reason_text(r) when is_binary(r), do: r
  defp reason_text(r) when is_atom(r), do: Atom.to_string(r)
  defp reason_text(r), do: inspect(r)
end
