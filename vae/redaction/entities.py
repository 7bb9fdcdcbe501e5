"""The entity types vae redacts and the placeholders that replace them.

A placeholder is the type in angle brackets (``<CREDIT_CARD>``): a reader of a
redacted transcript sees what was there without seeing it, and the judge reads
"the caller gave <CREDIT_CARD>" as a card number given. Placeholders are never
detected again, so redacting redacted text changes nothing.
"""

from __future__ import annotations

import re

#: The built-in types, redacted when a configuration names none (or has none).
BUILT_IN: tuple[str, ...] = (
    "PERSON",
    "PHONE_NUMBER",
    "CREDIT_CARD",
    "IBAN_CODE",
    "EMAIL_ADDRESS",
    "ADDRESS",
    "DATE_OF_BIRTH",
    "NATIONAL_ID",
)

#: What each built-in type covers, for ``vae schema redaction`` and the docs.
DESCRIPTIONS: dict[str, str] = {
    "PERSON": "people's names after a cue (my name is, this is, Mr/Ms); any name with an endpoint",
    "PHONE_NUMBER": "phone numbers valid in the configured regions (python-phonenumbers)",
    "CREDIT_CARD": "payment card numbers that pass the Luhn check",
    "IBAN_CODE": "IBANs with a valid check sum",
    "EMAIL_ADDRESS": "e-mail addresses, written or spoken (john at example dot com)",
    "ADDRESS": "street addresses (number, street name, street type) and UK/US postcodes",
    "DATE_OF_BIRTH": "full dates after a birth cue, or with a year from 1900 to five years ago",
    "NATIONAL_ID": "US social security numbers and UK national insurance numbers",
}

#: A type name: what a custom pattern may be called (``<NAME>`` in text).
TYPE_NAME = re.compile(r"^[A-Z][A-Z0-9_]{0,39}$")
#: A placeholder as it appears in redacted text.
PLACEHOLDER = re.compile(r"<[A-Z][A-Z0-9_]{0,39}>")


def placeholder(entity: str) -> str:
    """``<ENTITY>``: what replaces a finding of ``entity``."""
    return f"<{entity}>"


def has_placeholder(text: str) -> bool:
    return PLACEHOLDER.search(text) is not None
