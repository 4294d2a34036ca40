# The `marquee` command in a container: TypeScript run through tsx (a runtime dependency), so
# there is no build step; `docker-compose.yml` runs one process per role from this image.
FROM node:24.11.1-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev && npm cache clean --force
COPY bin ./bin
COPY contracts ./contracts
COPY infra ./infra
COPY projections ./projections
COPY services ./services
COPY docs ./docs
COPY tsconfig.json ./
ENV NODE_ENV=production LOG_FORMAT=json HOST=0.0.0.0
ENTRYPOINT ["node", "bin/marquee.js"]
CMD ["start"]
