/** The release store's settings (services/shared/config.ts): unset = the filesystem; S3 settings parsed and checked. */
import assert from 'node:assert/strict';
import { loadConfig } from '../../services/shared/config.ts';

describe('release store configuration', () => {
  it('keeps releases in the data directory unless RELEASES_S3_URL is set', () => {
    assert.equal(loadConfig({}).releasesS3, null);
    assert.equal(loadConfig({ RELEASES_S3_URL: ' ', RELEASES_S3_BUCKET: 'b' }).releasesS3, null);
  });

  it('reads the endpoint, bucket, prefix, region and key pair with their defaults', () => {
    assert.deepEqual(loadConfig({ RELEASES_S3_URL: 'http://127.0.0.1:7070' }).releasesS3, {
      url: 'http://127.0.0.1:7070',
      bucket: 'marquee-releases',
      prefix: '',
      region: 'us-east-1',
      accessKeyId: null,
      secretAccessKey: null,
    });
    assert.deepEqual(
      loadConfig({
        RELEASES_S3_URL: 'https://s3.example',
        RELEASES_S3_BUCKET: 'rel',
        RELEASES_S3_PREFIX: 'prod/',
        RELEASES_S3_REGION: 'eu-west-1',
        RELEASES_S3_ACCESS_KEY: 'AK',
        RELEASES_S3_SECRET_KEY: 'SK',
      }).releasesS3,
      { url: 'https://s3.example', bucket: 'rel', prefix: 'prod/', region: 'eu-west-1', accessKeyId: 'AK', secretAccessKey: 'SK' },
    );
  });

  it('refuses half a key pair rather than falling back to other credentials', () => {
    assert.throws(() => loadConfig({ RELEASES_S3_URL: 'http://x', RELEASES_S3_ACCESS_KEY: 'AK' }), /must be set together/);
    assert.throws(() => loadConfig({ RELEASES_S3_URL: 'http://x', RELEASES_S3_SECRET_KEY: 'SK' }), /must be set together/);
  });
});
