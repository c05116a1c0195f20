import io
import json
import logging

from monitor.redact import MASK, RedactingFilter, Secret, install_redaction, redact


def test_known_secrets_are_masked():
    assert redact("key abcd1234 used", ["abcd1234"]) == "key *** used"


def test_longest_secret_first():
    # With the short one first the long one would be left half-visible.
    assert redact("token=xx longsecret-extra yy", ["longsecret", "longsecret-extra"]).count("extra") == 0


def test_short_and_empty_secrets_are_ignored():
    assert redact("a b abc", ["", "a", "abc"]) == "a b abc"


def test_non_strings_in_secrets_are_ignored():
    assert redact("hello world", [None, 1234, "world"]) == "hello ***"  # type: ignore[list-item]


def test_bearer_tokens_are_masked():
    assert redact("Authorization: Bearer abc.def-123") == f"Authorization: Bearer {MASK}"
    assert redact("bearer XYZW1234") == f"bearer {MASK}"


def test_sk_keys_are_masked():
    assert redact("bad key sk-proj-AbCdEf1234567890 given") == f"bad key {MASK} given"
    assert redact("sk-ant-api03-abcdefghijkl") == MASK


def test_google_and_aws_keys_are_masked():
    assert MASK in redact("AIzaSyA1234567890abcdefghijklmnop")
    assert redact("id AKIAIOSFODNN7EXAMPLE end") == f"id {MASK} end"


def test_key_query_params_are_masked():
    url = "https://x.googleapis.com/v1beta/models/m:streamGenerateContent?alt=sse&key=AbC123"
    assert redact(url) == "https://x.googleapis.com/v1beta/models/m:streamGenerateContent?alt=sse&key=***"
    assert redact("?api_key=zzz&x=1") == "?api_key=***&x=1"
    assert redact("access_token=t0k3n") == "access_token=***"


def test_ordinary_text_is_left_alone():
    text = "HTTP 429: rate limited, retry after 2s (model gpt-4o-mini, region global)"
    assert redact(text) == text


def test_non_string_input_is_stringified():
    assert redact(12345, ["2345"]) == "1***"  # type: ignore[arg-type]


def test_secret_str_masks_repr_but_not_value():
    s = Secret("sk-real-value")
    assert repr(s) == "'***'"
    assert str(s) == "sk-real-value"
    assert f"Bearer {s}" == "Bearer sk-real-value"
    assert json.dumps({"k": s}) == '{"k": "sk-real-value"}'
    assert "sk-real" not in repr({"k": (s,)})
    assert s == "sk-real-value"


def _logger_with_filter(secrets):
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(message)s"))
    handler.addFilter(RedactingFilter(secrets))
    logger = logging.getLogger(f"test-redact-{id(stream)}")
    logger.handlers[:] = [handler]
    logger.propagate = False
    logger.setLevel(logging.DEBUG)
    return logger, stream


def test_filter_redacts_message_and_args():
    logger, stream = _logger_with_filter(["hunter22"])
    logger.info("key %s for %s", "hunter22", "openai")
    logger.info("plain hunter22")
    assert stream.getvalue() == "key *** for openai\nplain ***\n"


def test_filter_redacts_objects_in_args_and_exceptions():
    logger, stream = _logger_with_filter(["topsecret"])
    try:
        raise RuntimeError("auth failed with topsecret")
    except RuntimeError as exc:
        logger.exception("probe failed: %s", exc)
    out = stream.getvalue()
    assert "topsecret" not in out
    assert "probe failed: auth failed with ***" in out
    assert "RuntimeError" in out


def test_filter_survives_bad_format_strings():
    logger, stream = _logger_with_filter(["topsecret"])
    logger.info("%d items", "topsecret")
    assert "topsecret" not in stream.getvalue()


def test_filter_update_adds_secrets():
    filt = RedactingFilter(["first-secret"])
    filt.update(["second-secret"])
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "first-secret second-secret", None, None)
    assert filt.filter(record)
    assert record.getMessage() == "*** ***"


def test_install_redaction_on_a_logger():
    logger = logging.getLogger("test-install-redaction")
    stream = io.StringIO()
    logger.handlers[:] = [logging.StreamHandler(stream)]
    logger.propagate = False
    install_redaction(["supersecret"], logger)
    logger.warning("leaking supersecret")
    assert stream.getvalue().strip() == "leaking ***"
