"""A build records the whole SHA-256 of the sandbox content it built, and is found by it.

`ImageBuild.checksum` holds the sandbox's 16 hex chars, which collide after some 2^32 tries:
other content of the same checksum would pass for a build's, so an admin's Accept of the
dependencies would bind the wheel files of an image of other content, and the image status
would call that image the current one. `digest` holds the whole digest
(`ToolRegistry.sandbox_digest`), and the two decide by it.

Builds recorded before keep "" here. Catalog migration 0008 (acceptances) and scripttools
migration 0003 (trials) took the digest of the current code where the checksum matched it;
that does not hold for a build: its checksum was taken when it was queued, and its worker
built the content as it found it later, so a matching checksum does not say the image holds
the current content. So:
- Accept never binds such a build (fail closed): the page says to build first, and a build of
  an image the engine already holds only reads its wheel labels and records the digest, one
  click and no rebuild.
- The image status reads such a build by its image's tag, which names the whole digest the
  builder built (`catalog.selectors.sandbox_image_status`): a sandbox built before does not
  read "needs rebuild" for no reason. Tags from before they carried the whole digest name
  none, and those sandboxes do need a rebuild: runs look for the image under the new tag.
  The status only says whether to press Build; what secrets run beside stays with Accept.
"""

from __future__ import annotations

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("catalog", "0009_wheels_accepted_with_dependencies")]

    operations = [
        migrations.AddField(
            model_name="imagebuild",
            name="digest",
            field=models.CharField(blank=True, max_length=64),
        ),
    ]
