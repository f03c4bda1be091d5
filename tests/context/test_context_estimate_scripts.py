"""The estimate on scripts beyond English and Chinese: never far under the real count."""

from __future__ import annotations

import pytest
from context_helpers import qwen_tokens

from tether.context import estimate_text_tokens

SCRIPTS = {
    "Greek": "Η γρήγορη καφέ αλεπού πηδάει πάνω από τον τεμπέλη σκύλο και τρέχει στο δάσος ",
    "Armenian": "Արագ շագանակագույն աղվեսը ցատկում է ծույլ շան վրայով ",
    "Hindi": "तेज़ भूरी लोमड़ी आलसी कुत्ते के ऊपर कूदती है और जंगल में भाग जाती है ",
    "Bengali": "দ্রুত বাদামী শিয়াল অলস কুকুরের উপর দিয়ে লাফ দেয় ",
    "Tamil": "விரைவான பழுப்பு நரி சோம்பேறி நாயின் மேல் குதிக்கிறது ",
    "Telugu": "వేగవంతమైన గోధుమ రంగు నక్క సోమరి కుక్కపై దూకుతుంది ",
    "Myanmar": "အညိုရောင်မြေခွေးသည် ပျင်းရိသောခွေးကိုခုန်ကျော်သည် ",
    "Sinhala": "ඉක්මන් දුඹුරු නරියා කම්මැලි බල්ලා උඩින් පනී ",
    "Thai": "สุนัขจิ้งจอกสีน้ำตาลกระโดดข้ามสุนัขขี้เกียจ ",
    "Russian": "Быстрая коричневая лиса прыгает через ленивую собаку ",
    "Arabic": "الثعلب البني السريع يقفز فوق الكلب الكسول ",
    "Korean": "빠른 갈색 여우가 게으른 개를 뛰어넘습니다 ",
    "Japanese": "素早い茶色の狐が怠け者の犬を飛び越えます。カタカナ ",
    "emoji": "Great job 🎉 team! 🚀 Ship it 🔥👍 ",
    "emoji only": "😀🎉🚀🔥👍🙏😂🤔💯🐶",
    "rare CJK": "𠀀𠀁𠀂𠀃𠀄𠀅𠀆𠀇𠀈𠀉",
    "math symbols": "∀x∈ℝ ∑ ∫ ≤ ≥ ≠ ∞ √ ∂ ",
    "math letters": "𝐀𝐁𝐂𝐃 𝑥𝑦𝑧 𝔸𝔹ℂ ",
    "dingbats": "✓ ✔ ✗ ✘ ★ ☆ ♥ ☀ ☁ ",
    "typography": "“Hello,” she said — “it’s done…” • next ",
}


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_estimate_is_never_far_under_qwen(name: str) -> None:
    text = SCRIPTS[name] * 20
    ratio = estimate_text_tokens(text) / qwen_tokens(text)
    # an under-count lets a request pass the window before compression starts
    assert 0.8 <= ratio <= 2.2, ratio
