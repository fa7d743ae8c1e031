-- CreateTable
CREATE TABLE "slack_command_codes" (
    "code_hash" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "slack_command_codes_pkey" PRIMARY KEY ("code_hash")
);

-- CreateIndex
CREATE UNIQUE INDEX "slack_command_codes_user_id_key" ON "slack_command_codes"("user_id");

-- AddForeignKey
ALTER TABLE "slack_command_codes" ADD CONSTRAINT "slack_command_codes_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "user"("id") ON DELETE CASCADE ON UPDATE CASCADE;
