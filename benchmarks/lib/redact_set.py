"""The redaction benchmark's synthetic sets: templates x written and spoken forms x values.

Every value is generated (seeded): card numbers that pass the Luhn check,
phone numbers python-phonenumbers holds valid (UK and US), e-mail addresses,
IBANs with a valid check sum, dates of birth, US social security numbers and
UK national insurance numbers in their valid ranges, names and street
addresses. Each has a written form ("4111 1111 1111 1111") and a spoken one,
as a transcript of a caller reading it out would give it ("four one one one,
one one one one ...", "oh seven nine ...", "john dot lee at example dot com",
"the third of March nineteen eighty").

Two template sets: ``PROJECT`` (the sentences vae's patterns were written
against, as in tests/redaction_calls.py) and ``HELD_OUT`` (written
separately, never used while tuning). The example suite's lines, none of
which holds personal data, are the negatives: any finding in them is a false
positive.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

import yaml

DIGITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
TEENS = ["ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
         "eighteen", "nineteen"]  # fmt: skip
TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December"]  # fmt: skip
ORDINALS = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth",
            "tenth", "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth",
            "seventeenth", "eighteenth", "nineteenth", "twentieth"]  # fmt: skip
FIRST = ["Annabel", "Omar", "Priya", "Lukas", "Chen", "Maria", "Tom", "Fatima", "Jonas", "Keiko",
         "David", "Aisha", "Pierre", "Ingrid", "Mateo", "Grace"]  # fmt: skip
LAST = ["Lee", "Haddad", "Sharma", "Becker", "Wang", "Garcia", "Walsh", "Okafor", "Lindqvist",
        "Tanaka", "Miller", "Khan", "Dubois", "Nilsen", "Rossi", "Byrne"]  # fmt: skip
STREETS = ["Baker", "Mill", "Church", "Station", "Victoria", "Elm", "Oak", "Harbour", "Kings"]
TYPES = ["Street", "Road", "Lane", "Avenue", "Drive", "Close"]
CITIES = ["London", "Leeds", "Bristol", "Dublin", "Boston", "Denver"]
DOMAINS = ["example.com", "mail.co.uk", "inbox.org", "post.net"]


def digits_spoken(text: str, rng: random.Random, group: int = 4) -> str:
    """Digits read one by one, groups apart by a comma, zero as "oh" now and then."""
    zero = "oh" if rng.random() < 0.5 else "zero"
    words = [zero if d == "0" else DIGITS[int(d)] for d in text if d.isdigit()]
    groups = [" ".join(words[i : i + group]) for i in range(0, len(words), group)]
    return ", ".join(groups)


def number_words(n: int) -> str:
    if n < 10:
        return DIGITS[n]
    if n < 20:
        return TEENS[n - 10]
    tens, unit = divmod(n, 10)
    return TENS[tens] + (f" {DIGITS[unit]}" if unit else "")


def year_words(year: int) -> str:
    if 2000 <= year < 2010:
        return f"two thousand and {DIGITS[year - 2000]}" if year > 2000 else "two thousand"
    hi, lo = divmod(year, 100)
    return f"{number_words(hi)} {number_words(lo) if lo >= 10 else 'oh ' + DIGITS[lo]}"


def luhn_complete(body: str) -> str:
    total = 0
    for i, d in enumerate(reversed(body)):
        n = int(d)
        if i % 2 == 0:
            n = n * 2 - 9 if n * 2 > 9 else n * 2
        total += n
    return body + str((10 - total % 10) % 10)


def card(rng: random.Random) -> tuple[str, str]:
    prefix, length = rng.choice([("4", 16), ("51", 16), ("55", 16), ("6011", 16), ("37", 15)])
    number = luhn_complete(prefix + "".join(rng.choice("0123456789")
                                            for _ in range(length - len(prefix) - 1)))  # fmt: skip
    style = rng.randrange(3)
    written = (" ".join(number[i : i + 4] for i in range(0, len(number), 4)) if style == 0
               else "-".join(number[i : i + 4] for i in range(0, len(number), 4)) if style == 1
               else number)  # fmt: skip
    return written, digits_spoken(number, rng)


def phone(rng: random.Random) -> tuple[str, str]:
    import phonenumbers

    while True:
        if rng.random() < 0.5:
            national = "07" + rng.choice("45789") + "".join(rng.choice("0123456789")
                                                            for _ in range(8))  # fmt: skip
            region, groups = "GB", (5, 6)
        else:
            national = (rng.choice("23456789") + "".join(rng.choice("0123456789") for _ in range(2))
                        + rng.choice("23456789") + "".join(rng.choice("0123456789")
                                                           for _ in range(6)))  # fmt: skip
            region, groups = "US", (3, 3, 4)
        parsed = phonenumbers.parse(national, region)
        if phonenumbers.is_valid_number(parsed):
            break
    parts, at = [], 0
    for g in groups:
        parts.append(national[at : at + g])
        at += g
    if region == "US":
        written = f"({parts[0]}) {parts[1]}-{parts[2]}"
        spoken = ", ".join(digits_spoken(p, rng, 99) for p in parts)
    else:
        written = " ".join(parts)
        spoken = ", ".join(digits_spoken(p, rng, 99) for p in parts)
    return written, spoken


def email(rng: random.Random) -> tuple[str, str]:
    first, last, domain = rng.choice(FIRST).lower(), rng.choice(LAST).lower(), rng.choice(DOMAINS)
    sep = rng.choice([".", "_", ""])
    local = f"{first}{sep}{last}"
    spoken_local = f"{first} {dict([('.', 'dot'), ('_', 'underscore')]).get(sep, '')} {last}"
    spoken_domain = domain.replace(".", " dot ")
    return f"{local}@{domain}", " ".join(f"{spoken_local} at {spoken_domain}".split())


def iban(rng: random.Random) -> tuple[str, str]:
    bank = "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ") for _ in range(4))
    account = "".join(rng.choice("0123456789") for _ in range(14))
    moved = bank + account + "GB00"
    numeric = "".join(str(int(c, 36)) for c in moved)
    check = 98 - int(numeric) % 97
    value = f"GB{check:02d}{bank}{account}"
    written = " ".join(value[i : i + 4] for i in range(0, len(value), 4))
    spoken = ", ".join(
        " ".join(c if c.isalpha() else DIGITS[int(c)] for c in value[i : i + 4])
        for i in range(0, len(value), 4)
    )
    return written, spoken


def birth_date(rng: random.Random) -> tuple[str, str]:
    year, month, day = rng.randint(1940, 2005), rng.randrange(12), rng.randint(1, 28)
    style = rng.randrange(3)
    written = (f"{day} {MONTHS[month]} {year}" if style == 0
               else f"{day:02d}/{month + 1:02d}/{year}" if style == 1
               else f"{MONTHS[month]} {day}, {year}")  # fmt: skip
    ordinal = ORDINALS[day - 1] if day <= 20 else f"twenty {ORDINALS[day - 21]}"
    spoken = (f"the {ordinal} of {MONTHS[month]} {year_words(year)}" if rng.random() < 0.5
              else f"{MONTHS[month]} {ordinal}, {year_words(year)}")  # fmt: skip
    return written, spoken


def national_id(rng: random.Random) -> tuple[str, str]:
    if rng.random() < 0.5:
        area = rng.choice([n for n in range(1, 900) if n != 666])
        group, serial = rng.randint(1, 99), rng.randint(1, 9999)
        value = f"{area:03d}-{group:02d}-{serial:04d}"
        spoken = ", ".join(digits_spoken(p, rng, 99) for p in value.split("-"))
        return value, spoken
    first = rng.choice("ABCEGHJKLMNOPRSTWXYZ")
    second = rng.choice("ABCEGHJKLMNPRSTWXYZ")
    digits = "".join(rng.choice("0123456789") for _ in range(6))
    suffix = rng.choice("ABCD")
    value = f"{first}{second} {digits[:2]} {digits[2:4]} {digits[4:]} {suffix}"
    spoken = f"{first} {second} {digits_spoken(digits, rng, 2)}, {suffix}"
    return value, spoken


def person(rng: random.Random) -> tuple[str, str]:
    name = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
    return name, name


def address(rng: random.Random) -> tuple[str, str]:
    n, street, kind, city = (rng.randint(2, 99), rng.choice(STREETS), rng.choice(TYPES),
                             rng.choice(CITIES))  # fmt: skip
    return f"{n} {street} {kind}, {city}", f"{number_words(n)} {street} {kind}, {city}"


VALUES = {"CREDIT_CARD": card, "PHONE_NUMBER": phone, "EMAIL_ADDRESS": email,
          "IBAN_CODE": iban, "DATE_OF_BIRTH": birth_date, "NATIONAL_ID": national_id,
          "PERSON": person, "ADDRESS": address}  # fmt: skip

#: Sentences vae's patterns were written against ({v}: the value).
PROJECT: dict[str, list[str]] = {
    "CREDIT_CARD": ["My card number is {v} thanks", "the card is {v}", "It's {v}.",
                    "Card number {v}, expiry next year"],
    "PHONE_NUMBER": ["Call me back on {v} please", "my number is {v}", "It's {v}.",
                     "you can reach me at {v} after six"],
    "EMAIL_ADDRESS": ["My email is {v} okay", "send it to {v}", "it's {v}",
                      "email address {v}, thanks"],
    "IBAN_CODE": ["Pay from {v} today", "my IBAN is {v}", "the account is {v}.",
                  "transfer it to {v} please"],
    "DATE_OF_BIRTH": ["I was born on {v} I think", "my date of birth is {v}", "born {v}",
                      "Date of birth, {v}."],
    "NATIONAL_ID": ["My social security number is {v} right", "my national insurance number "
                    "is {v}", "SSN {v}", "it is {v}, my national insurance"],
    "PERSON": ["Hello my name is {v} and", "this is {v} speaking", "My name's {v}.",
               "I'm {v}, calling about my bill"],
    "ADDRESS": ["I live at {v} now", "my address is {v}", "send it to {v} please",
                "We moved to {v} in May"],
}  # fmt: skip

#: More sentences: the first held-out set, whose misses were looked at once while
#: fixing bugs they shared with the ones above; since then part of the project set.
SEEN: dict[str, list[str]] = {
    "CREDIT_CARD": ["ok so the long number on the front is {v}", "Charge {v} for both tickets",
                    "use the visa, {v}", "right, {v}, and the code on the back too"],
    "PHONE_NUMBER": ["text the code to {v}", "the mobile is {v} if I'm out",
                     "Yes. {v}. That's my landline.", "ring {v} and ask for the office"],
    "EMAIL_ADDRESS": ["confirmation goes to {v} I suppose", "{v} is the work one",
                      "could you update it to {v}", "I registered with {v} last year"],
    "IBAN_CODE": ["refund it into {v}", "the IBAN on my statement says {v}",
                  "{v}, that's the business account", "wire the deposit to {v}"],
    "DATE_OF_BIRTH": ["DOB is {v}", "my birthday is {v}", "and the date of birth, it's {v}",
                      "he was born {v} in Cork"],
    "NATIONAL_ID": ["the social is {v}", "for the record my SSN is {v}",
                    "NI number {v}", "social security, {v}, is that enough"],
    "PERSON": ["you're speaking with {v}", "the account holder is {v}",
               "ask for {v} when you call", "{v} here, from accounts"],
    "ADDRESS": ["deliver to {v}", "the flat is at {v}, second floor", "{v} is my home",
                "can you post it to {v}"],
}  # fmt: skip


for _entity, _more in SEEN.items():
    PROJECT[_entity] = PROJECT[_entity] + _more

#: Other sentences, written after the last change to the patterns and never tuned against.
HELD_OUT: dict[str, list[str]] = {
    "CREDIT_CARD": ["put it on the card ending... no, the whole thing, {v}",
                    "the number is {v}, the name on it is mine", "hang on. {v}. got that?"],
    "PHONE_NUMBER": ["my daughter's number is {v}", "{v}, but only after five",
                     "it might be on file as {v}"],
    "EMAIL_ADDRESS": ["forward everything to {v} from now on", "I think it was {v}, or maybe not",
                      "the login is {v}"],
    "IBAN_CODE": ["the old account was {v}", "please debit {v} each month",
                  "{v} is where the salary goes"],
    "DATE_OF_BIRTH": ["she was born {v}", "the patient's birth date is {v}",
                      "date of birth {v}, yes"],
    "NATIONAL_ID": ["here's my social security number, {v}", "my NI number's {v}",
                    "they asked for the SSN, it's {v}"],
    "PERSON": ["my husband, {v}, set it up", "the card says {v} on it", "put it under {v}"],
    "ADDRESS": ["the billing address is {v}", "we're at {v} till June", "{v}, near the park"],
}  # fmt: skip


@dataclass(frozen=True)
class Example:
    entity: str
    form: str
    text: str
    #: The value's span in ``text``.
    start: int
    end: int


def generate(templates: dict[str, list[str]], per_template: int, seed: int) -> list[Example]:
    rng = random.Random(seed)
    out = []
    for entity, sentences in templates.items():
        for template in sentences:
            for _ in range(per_template):
                written, spoken = VALUES[entity](rng)
                for form, value in (("written", written), ("spoken", spoken)):
                    if form == "spoken" and entity == "PERSON":
                        value = value.lower() if rng.random() < 0.0 else value
                    text = template.replace("{v}", value)
                    start = template.index("{v}")
                    out.append(Example(entity, form, text, start, start + len(value)))
    return out


def example_lines(suite: Path) -> list[str]:
    """Every line the example suite's scripted callers and agents say."""
    lines = []
    for path in sorted(suite.glob("*.yaml")):
        doc = yaml.safe_load(path.read_text())
        for side in ("user", "agent"):
            for turn in (doc.get(side) or {}).get("script") or []:
                if isinstance(turn, dict) and isinstance(turn.get("say"), str):
                    lines.append(turn["say"])
    return lines
