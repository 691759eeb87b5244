"""A generation request's prompt as token ids: a document fitted to the window (only the document is
cut), a chat rendered by the model's template, or plain text kept from its end."""

from __future__ import annotations

from transformers import PreTrainedTokenizerBase

from longread.models.errors import BadRequestError, ContextTooLongError
from longread.models.hf.batch_generate import Decoding
from longread.models.prompt_fit import FittedPrompt, fit_document_prompt
from longread.models.requests import ChatPrompt, DocumentPrompt, GenerateRequest
from longread.models.tokens import TokenEncoder, keep_last_text_tokens, start_length


def chat_ids(
    prompt: ChatPrompt, tokenizer: PreTrainedTokenizerBase, encoder: TokenEncoder, model: str
) -> list[int]:
    """The conversation rendered by the tokenizer's chat template, with the assistant's turn opened.

    The rendered text is encoded by the one start-token rule: a template that already writes the
    BOS (SmolLM2's ``<|im_start|>``, Gemma's ``<bos>``) gets no second one.
    """
    template = getattr(tokenizer, "chat_template", None)
    if not template:
        raise BadRequestError(
            f"model {model} has no chat template, so a ChatPrompt cannot be "
            "rendered; use an instruct model with a template, or pass the prompt as plain text"
        )
    text = tokenizer.apply_chat_template(prompt.as_messages(), tokenize=False, add_generation_prompt=True)
    ids = encoder.encode(str(text))
    start = tokenizer.bos_token_id
    if isinstance(start, int) and ids[:2] == [start, start]:
        ids = ids[1:]  # never two start tokens
    return ids


def prepare_decoding(
    request: GenerateRequest,
    tokenizer: PreTrainedTokenizerBase,
    encoder: TokenEncoder,
    max_length: int,
    model: str,
) -> tuple[Decoding, FittedPrompt | None]:
    """The prompt's token ids fitted to the window, and (document tokens before, after) for a document."""
    room = max_length - request.max_tokens
    if room < 1:
        raise ContextTooLongError(
            f"max_tokens={request.max_tokens} leaves no room for a prompt in the model's window of "
            f"{max_length} tokens; lower max_tokens"
        )
    document: FittedPrompt | None = None
    if isinstance(request.prompt, DocumentPrompt):
        # Only the document is cut, from the side the task named; the instruction never is.
        fitted = fit_document_prompt(
            request.prompt, encoder.encode_plain, room, bos_id=encoder.start_token_id
        )
        prompt = list(fitted.token_ids) or [encoder.prefix_token_id]
        document = fitted
    elif isinstance(request.prompt, ChatPrompt):
        prompt = chat_ids(request.prompt, tokenizer, encoder, model)
        if len(prompt) > room:
            raise ContextTooLongError(
                f"the chat prompt has {len(prompt)} tokens and max_tokens={request.max_tokens} leaves "
                f"{room} of the model's {max_length}; a chat prompt is never cut — shorten the "
                "message or lower max_tokens"
            )
    else:
        prompt = encoder.encode(request.prompt) or [encoder.prefix_token_id]
        # Keep the end of the prompt (as lm-eval), and the start token in front of it (unlike lm-eval).
        start = encoder.start_token_id
        prompt = keep_last_text_tokens(prompt, room - start_length(prompt, start), start)
    decoding = Decoding(
        prompt=tuple(prompt),
        max_tokens=request.max_tokens,
        stop=request.stop,
        temperature=request.temperature,
        seed=request.seed,
    )
    return decoding, document
