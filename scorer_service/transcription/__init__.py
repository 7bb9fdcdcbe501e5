"""The transcription stage of a scoring (``vae rescore --transcribe``) and whose words count.

:mod:`~vae.scorer_service.transcription.stage` transcribes a session's recorded
channels turn by turn into a layer tied to the scoring;
:mod:`~vae.scorer_service.transcription.words` decides, for the judge and for
HEARD_CORRECTLY, where each side's words come from.
"""
